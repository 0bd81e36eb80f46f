// dm-verity for a Bronze rootfs.sqsh, read from Node: the layout image-builder/verity.sh makes
// (the squashfs, zero-padded to 4 KiB, then veritysetup's 512-byte superblock in a 4 KiB block,
// then the hash tree) and the tree itself, recomputed from the data.
//
// The tree (dm-verity format 1, SHA-256, 4 KiB blocks): the hash of a block is
// SHA-256(salt || block); a hash block holds 128 hashes, zero-padded; each level hashes the
// one below until one block is left, and the root hash is the hash of that block. The levels
// are stored top first, right after the superblock.
//
// machined uses it to say why a tried slot did not boot (its image no longer matches its root
// hash), and the unit test checks it against veritysetup.
import { createHash } from 'node:crypto';

export const VERITY_BLOCK = 4096;
const HASH_SIZE = 32;
const PER_BLOCK = VERITY_BLOCK / HASH_SIZE;
const SQUASHFS_MAGIC = 'hsqs';

export interface VerityLayout {
  /** 4 KiB blocks of data (the squashfs, padded), and where the superblock starts, in bytes. */
  dataBlocks: number;
  superblockOffset: number;
  /** Where the tree starts (after the superblock), in bytes. */
  treeOffset: number;
  salt: Buffer;
  uuid: string;
}

export class VerityError extends Error {
  override name = 'VerityError';
}

/** The layout of a rootfs.sqsh with its tree appended; throws VerityError naming what is wrong. */
export function verityLayout(image: Buffer): VerityLayout {
  if (image.length < 96 || image.toString('latin1', 0, 4) !== SQUASHFS_MAGIC) throw new VerityError('not a squashfs (no hsqs magic)');
  const used = Number(image.readBigUInt64LE(40));
  const offset = Math.ceil(used / VERITY_BLOCK) * VERITY_BLOCK;
  if (image.length < offset + 512) throw new VerityError(`no dm-verity superblock after the squashfs (it ends at byte ${offset}, the file at ${image.length})`);
  const sb = image.subarray(offset, offset + 512);
  if (sb.toString('latin1', 0, 8) !== 'verity\0\0') throw new VerityError(`no dm-verity superblock at byte ${offset}`);
  const version = sb.readUInt32LE(8);
  const hashType = sb.readUInt32LE(12);
  const algorithm = sb.toString('latin1', 32, 64).replace(/\0+$/, '');
  const dataBlockSize = sb.readUInt32LE(64);
  const hashBlockSize = sb.readUInt32LE(68);
  const dataBlocks = Number(sb.readBigUInt64LE(72));
  const saltSize = sb.readUInt16LE(80);
  if (version !== 1 || hashType !== 1 || algorithm !== 'sha256' || dataBlockSize !== VERITY_BLOCK || hashBlockSize !== VERITY_BLOCK || saltSize > 256) {
    throw new VerityError(`unsupported dm-verity superblock (version ${version}, type ${hashType}, ${algorithm}, blocks ${dataBlockSize}/${hashBlockSize})`);
  }
  if (dataBlocks * VERITY_BLOCK !== offset) throw new VerityError(`the tree covers ${dataBlocks} blocks, the squashfs takes ${offset / VERITY_BLOCK}`);
  const u = sb.subarray(16, 32).toString('hex');
  return {
    dataBlocks,
    superblockOffset: offset,
    treeOffset: offset + VERITY_BLOCK,
    salt: Buffer.from(sb.subarray(88, 88 + saltSize)),
    uuid: `${u.slice(0, 8)}-${u.slice(8, 12)}-${u.slice(12, 16)}-${u.slice(16, 20)}-${u.slice(20)}`,
  };
}

function hashBlock(salt: Buffer, block: Uint8Array): Buffer {
  return createHash('sha256').update(salt).update(block).digest();
}

/** The levels of the tree over `blocks` data blocks, bottom first, each as its hash blocks. */
export function verityTree(data: Uint8Array, blocks: number, salt: Buffer): { levels: Buffer[]; rootHash: string } {
  if (data.length < blocks * VERITY_BLOCK) throw new VerityError(`${data.length} bytes of data, ${blocks} blocks expected`);
  const levels: Buffer[] = [];
  let count = blocks;
  let below: Uint8Array = data;
  for (;;) {
    const level = Buffer.alloc(Math.ceil(count / PER_BLOCK) * VERITY_BLOCK);
    for (let i = 0; i < count; i++) hashBlock(salt, below.subarray(i * VERITY_BLOCK, (i + 1) * VERITY_BLOCK)).copy(level, i * HASH_SIZE);
    levels.push(level);
    count = level.length / VERITY_BLOCK;
    below = level;
    if (count === 1) break;
  }
  return { levels, rootHash: hashBlock(salt, levels.at(-1)!).toString('hex') };
}

export interface VerityCheck {
  ok: boolean;
  /** The root hash the data and tree give (hex). */
  rootHash: string;
  /** What is wrong, when not ok. */
  problem?: string;
}

/**
 * Whether a rootfs.sqsh (with its tree) would pass dm-verity with `expectedRoot`: its data
 * hashes up to that root and the stored tree is the one the data gives (the kernel reads both).
 */
export function checkVerity(image: Buffer, expectedRoot: string): VerityCheck {
  let layout: VerityLayout;
  try {
    layout = verityLayout(image);
  } catch (err) {
    return { ok: false, rootHash: '', problem: (err as Error).message };
  }
  const { levels, rootHash } = verityTree(image, layout.dataBlocks, layout.salt);
  // Stored top level first: level k (0 = the data's hashes) starts after the levels above it.
  const starts: number[] = [];
  let at = layout.treeOffset;
  for (let k = levels.length - 1; k >= 0; k--) {
    starts[k] = at;
    at += levels[k]!.length;
  }
  if (image.length < at) return { ok: false, rootHash, problem: `the hash tree is cut short (${image.length} of ${at} bytes)` };
  const stored = (k: number) => image.subarray(starts[k]!, starts[k]! + levels[k]!.length);
  const leaf = stored(0);
  for (let i = 0; i < layout.dataBlocks; i++) {
    if (!leaf.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE).equals(levels[0]!.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE))) {
      return { ok: false, rootHash, problem: `data block ${i} (bytes ${i * VERITY_BLOCK} to ${(i + 1) * VERITY_BLOCK - 1}) does not match its hash in the tree` };
    }
  }
  for (let k = 0; k < levels.length; k++) {
    if (!stored(k).equals(levels[k]!)) return { ok: false, rootHash, problem: `level ${k} of the stored hash tree does not match the level below it` };
  }
  if (rootHash !== expectedRoot) return { ok: false, rootHash, problem: `the image's root hash is ${rootHash}, not the expected ${expectedRoot}` };
  return { ok: true, rootHash };
}
