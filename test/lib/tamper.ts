// A tampered root for the verity tests: the initramfs (a zstd-framed newc cpio, see
// image-builder/initramfs.sh) unpacked, one byte of the squashfs data in rootfs.sqsh flipped,
// and the cpio written back as it is (the kernel takes an uncompressed cpio as well). The hash
// tree after the squashfs and the root hash stay as built: only the data changed.
import { execFileSync } from 'node:child_process';

const CPIO_HEADER = 110;
const align4 = (n: number) => (n + 3) & ~3;

/** Where a file's data lies in a newc cpio archive. */
export function cpioFile(cpio: Buffer, name: string): { offset: number; size: number } {
  for (let at = 0; at + CPIO_HEADER <= cpio.length; ) {
    const magic = cpio.toString('latin1', at, at + 6);
    if (magic !== '070701' && magic !== '070702') throw new Error(`not a newc cpio archive at byte ${at} (magic ${JSON.stringify(magic)})`);
    const field = (i: number) => parseInt(cpio.toString('latin1', at + 6 + 8 * i, at + 14 + 8 * i), 16);
    const size = field(6);
    const nameSize = field(11);
    const entry = cpio.toString('latin1', at + CPIO_HEADER, at + CPIO_HEADER + nameSize - 1);
    const offset = align4(at + CPIO_HEADER + nameSize);
    if (entry === 'TRAILER!!!') break;
    if (entry === name || entry === `./${name}`) return { offset, size };
    at = align4(offset + size);
  }
  throw new Error(`${name} is not in the cpio archive`);
}

export interface TamperedRoot {
  /** The uncompressed cpio with one byte changed. */
  cpio: Buffer;
  /** The changed byte's offset in rootfs.sqsh, and the 4 KiB block dm-verity will name. */
  offset: number;
  block: number;
}

/** `initramfs` (zstd or plain cpio) with the byte in the middle of its squashfs's data flipped. */
export function tamperedInitramfs(initramfs: string): TamperedRoot {
  const cpio = execFileSync('zstd', ['-dcf', initramfs], { maxBuffer: 1 << 30 });
  const sqsh = cpioFile(cpio, 'rootfs.sqsh');
  if (cpio.toString('latin1', sqsh.offset, sqsh.offset + 4) !== 'hsqs') throw new Error('rootfs.sqsh in the initramfs is not a squashfs');
  // bytes_used (u64 at 40): the squashfs itself; the verity superblock and tree follow it.
  const used = Number(cpio.readBigUInt64LE(sqsh.offset + 40));
  const offset = Math.floor(used / 2 / 4096) * 4096 + 1234;
  cpio.writeUInt8(cpio.readUInt8(sqsh.offset + offset) ^ 0xff, sqsh.offset + offset);
  return { cpio, offset, block: Math.floor(offset / 4096) };
}
