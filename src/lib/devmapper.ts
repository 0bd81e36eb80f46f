// Device-mapper through koffi's ioctl on /dev/mapper/control: what the kernel says about a mapped
// device (DM_TABLE_STATUS), and making and removing one (the dm-crypt mappings of encrypted
// STATE and EPHEMERAL). preinit (image-builder/preinit/preinit.c) sets the root's verity target
// up; machined asks the kernel what it is, rather than trusting a note.
//
// The structures are the kernel's (include/uapi/linux/dm-ioctl.h):
//   struct dm_ioctl       { u32 version[3]; u32 data_size; u32 data_start; u32 target_count;
//                           s32 open_count; u32 flags; u32 event_nr; u32 padding; u64 dev;
//                           char name[128]; char uuid[129]; char data[7]; }          312 bytes
//   struct dm_target_spec { u64 sector_start; u64 length; s32 status; u32 next;
//                           char target_type[16]; }  then the target's NUL-terminated text  40 bytes
import fs from 'node:fs';
import { koffi } from './native.ts';
import { SyscallError } from './sys.ts';

const DM_IOCTL_SIZE = 312;
const DM_TARGET_SPEC_SIZE = 40;
const DM_NAME_LEN = 128;
const DM_UUID_LEN = 129;
/** The interface version Bronze speaks (the kernel accepts any minor up to its own). */
const DM_VERSION = [4, 0, 0] as const;
/** _IOWR(0xfd, 12, struct dm_ioctl). */
export const DM_TABLE_STATUS = 0xc138fd0c;
/** Flags: DM_STATUS_TABLE_FLAG asks for the table (the parameters it was loaded with), not the status. */
export const DM_READONLY_FLAG = 1 << 0;
export const DM_STATUS_TABLE_FLAG = 1 << 4;
export const DM_BUFFER_FULL_FLAG = 1 << 8;

export interface DmTarget {
  /** In 512-byte sectors. */
  start: number;
  length: number;
  type: string;
  /** The table line's parameters, or the target's status (e.g. verity's 'V' or 'C'). */
  text: string;
}

export interface DmDevice {
  name: string;
  /** major:minor of the mapped device. */
  major: number;
  minor: number;
  readOnly: boolean;
  targets: DmTarget[];
}

/** The request buffer for DM_TABLE_STATUS of the device called `name`. */
export function tableStatusRequest(name: string, flags: number, size = 16384): Buffer {
  if (Buffer.byteLength(name) >= DM_NAME_LEN) throw new Error(`device-mapper name ${JSON.stringify(name)} is longer than ${DM_NAME_LEN - 1} bytes`);
  const b = Buffer.alloc(size);
  DM_VERSION.forEach((v, i) => b.writeUInt32LE(v, 4 * i));
  b.writeUInt32LE(size, 12);
  b.writeUInt32LE(DM_IOCTL_SIZE, 16);
  b.writeUInt32LE(flags, 28);
  b.write(name, 48, 'utf8');
  return b;
}

const cstring = (b: Buffer, start: number, end: number) => {
  const nul = b.indexOf(0, start);
  return b.toString('utf8', start, nul < 0 || nul > end ? end : nul);
};

/** The reply to DM_TABLE_STATUS: the device and its targets. Throws on a reply that does not add up. */
export function parseTableStatus(b: Buffer): DmDevice {
  if (b.length < DM_IOCTL_SIZE) throw new Error(`device-mapper reply of ${b.length} bytes is shorter than struct dm_ioctl`);
  const flags = b.readUInt32LE(28);
  if (flags & DM_BUFFER_FULL_FLAG) throw new Error('device-mapper reply did not fit its buffer');
  const dataSize = Math.min(b.readUInt32LE(12), b.length);
  const dataStart = b.readUInt32LE(16);
  const count = b.readUInt32LE(20);
  const dev = b.readBigUInt64LE(40);
  // huge_encode_dev: minor's low 8 bits, major, minor's other bits.
  const major = Number((dev >> 8n) & 0xfffn);
  const minor = Number((dev & 0xffn) | ((dev >> 12n) & 0xfff00n));
  const targets: DmTarget[] = [];
  let at = dataStart;
  for (let i = 0; i < count; i++) {
    if (at + DM_TARGET_SPEC_SIZE > dataSize) throw new Error(`device-mapper reply: target ${i} lies outside the ${dataSize} bytes returned`);
    const next = b.readUInt32LE(at + 20);
    targets.push({
      start: Number(b.readBigUInt64LE(at)),
      length: Number(b.readBigUInt64LE(at + 8)),
      type: cstring(b, at + 24, at + 40),
      text: cstring(b, at + DM_TARGET_SPEC_SIZE, dataSize),
    });
    // `next` counts from the start of the data area, not from this target.
    at = dataStart + next;
  }
  return { name: cstring(b, 48, 48 + DM_NAME_LEN), major, minor, readOnly: (flags & DM_READONLY_FLAG) !== 0, targets };
}

let ioctl: ((fd: number, request: number, ...args: unknown[]) => number) | undefined;

/**
 * DM_TABLE_STATUS of the mapped device `name`: with `table`, the parameters each target was
 * loaded with; without, each target's status. Needs /dev/mapper/control (root).
 */
export function dmTableStatus(name: string, table: boolean, control = '/dev/mapper/control'): DmDevice {
  return parseTableStatus(dmCall(DM_TABLE_STATUS, `DM_TABLE_STATUS ${name}`, tableStatusRequest(name, table ? DM_STATUS_TABLE_FLAG : 0), control));
}

/** A verity target's table line (dm-verity's format 1), by name. */
export interface VerityTable {
  version: number;
  dataDevice: string;
  hashDevice: string;
  dataBlockSize: number;
  hashBlockSize: number;
  dataBlocks: number;
  hashStartBlock: number;
  algorithm: string;
  rootHash: string;
  salt: string;
  /** The optional arguments, e.g. ['check_at_most_once']. */
  options: string[];
}

export function parseVerityTable(text: string): VerityTable {
  const f = text.trim().split(/\s+/);
  if (f.length < 10) throw new Error(`not a dm-verity table: ${JSON.stringify(text)}`);
  const n = (s: string, what: string) => {
    if (!/^\d+$/.test(s)) throw new Error(`dm-verity table: ${what} ${JSON.stringify(s)} is not a number`);
    return Number(s);
  };
  const optCount = f.length > 10 ? n(f[10]!, 'optional argument count') : 0;
  return {
    version: n(f[0]!, 'version'),
    dataDevice: f[1]!,
    hashDevice: f[2]!,
    dataBlockSize: n(f[3]!, 'data block size'),
    hashBlockSize: n(f[4]!, 'hash block size'),
    dataBlocks: n(f[5]!, 'data blocks'),
    hashStartBlock: n(f[6]!, 'hash start block'),
    algorithm: f[7]!,
    rootHash: f[8]!,
    salt: f[9]!,
    options: f.slice(11, 11 + optCount),
  };
}

/** _IOWR(0xfd, n, struct dm_ioctl) for the commands Bronze sends besides DM_TABLE_STATUS. */
export const DM_DEV_CREATE = 0xc138fd03;
export const DM_DEV_REMOVE = 0xc138fd04;
export const DM_DEV_SUSPEND = 0xc138fd06;
export const DM_TABLE_LOAD = 0xc138fd09;
/** The kernel wipes the ioctl buffer after use: set on tables that carry a key. */
export const DM_SECURE_DATA_FLAG = 1 << 15;

/** A one-target table load request: the dm_ioctl header, one dm_target_spec and its parameters. */
export function tableLoadRequest(name: string, target: { length: number; type: string; params: string }, flags: number): Buffer {
  const head = tableStatusRequest(name, flags, DM_IOCTL_SIZE);
  if (Buffer.byteLength(target.type) >= 16) throw new Error(`device-mapper target type ${JSON.stringify(target.type)} is longer than 15 bytes`);
  const params = Buffer.from(`${target.params}\0`, 'utf8');
  const specSize = Math.ceil((DM_TARGET_SPEC_SIZE + params.length) / 8) * 8;
  const b = Buffer.alloc(DM_IOCTL_SIZE + specSize);
  head.copy(b);
  b.writeUInt32LE(b.length, 12);
  b.writeUInt32LE(1, 20); // target_count
  b.writeBigUInt64LE(0n, DM_IOCTL_SIZE);
  b.writeBigUInt64LE(BigInt(target.length), DM_IOCTL_SIZE + 8);
  b.writeUInt32LE(specSize, DM_IOCTL_SIZE + 20); // next
  b.write(target.type, DM_IOCTL_SIZE + 24, 'utf8');
  params.copy(b, DM_IOCTL_SIZE + DM_TARGET_SPEC_SIZE);
  return b;
}

function dmCall(request: number, what: string, buf: Buffer, control: string): Buffer {
  const k = koffi();
  ioctl ??= k.load('libc.so.6').func('int ioctl(int fd, unsigned long request, ...)');
  const fd = fs.openSync(control, fs.constants.O_RDWR);
  try {
    if (ioctl(fd, request, 'uint8_t *', buf) < 0) throw new SyscallError(`ioctl(${control}, ${what})`, k.errno());
  } finally {
    fs.closeSync(fd);
  }
  return buf;
}

/**
 * Creates the mapped device `name` with one target and makes it live (create, load, resume),
 * as dmsetup create does; returns its major:minor. A device left half-made by a failed load is
 * removed again. `secure` has the kernel wipe the buffers (the table carries a key).
 */
export function dmCreate(name: string, target: { length: number; type: string; params: string }, o: { secure?: boolean; control?: string; uuid?: string } = {}): { major: number; minor: number } {
  const control = o.control ?? '/dev/mapper/control';
  const secure = o.secure ? DM_SECURE_DATA_FLAG : 0;
  const request = tableStatusRequest(name, 0, DM_IOCTL_SIZE);
  if (o.uuid !== undefined) {
    if (Buffer.byteLength(o.uuid) >= DM_UUID_LEN) throw new Error(`device-mapper uuid ${JSON.stringify(o.uuid)} is longer than ${DM_UUID_LEN - 1} bytes`);
    request.write(o.uuid, 48 + DM_NAME_LEN, 'utf8');
  }
  const created = parseTableStatus(dmCall(DM_DEV_CREATE, `DM_DEV_CREATE ${name}`, request, control));
  try {
    const load = tableLoadRequest(name, target, secure);
    try {
      dmCall(DM_TABLE_LOAD, `DM_TABLE_LOAD ${name} (${target.type})`, load, control);
    } finally {
      load.fill(0);
    }
    dmCall(DM_DEV_SUSPEND, `DM_DEV_SUSPEND ${name} (resume)`, tableStatusRequest(name, secure, DM_IOCTL_SIZE), control);
  } catch (err) {
    try {
      dmRemove(name, control);
    } catch {
      // the error that matters is the first one
    }
    throw err;
  }
  return { major: created.major, minor: created.minor };
}

/** Removes the mapped device `name` (it must not be open: unmount first). */
export function dmRemove(name: string, control = '/dev/mapper/control'): void {
  dmCall(DM_DEV_REMOVE, `DM_DEV_REMOVE ${name}`, tableStatusRequest(name, 0, DM_IOCTL_SIZE), control);
}
