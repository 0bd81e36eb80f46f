// The pages of the single executable's SEA blob (the role bundles, their code caches, koffi's
// native module: image-builder/sea.ts) that a process has read, given back once it has loaded
// what it needs from them. They are a private, read-only file mapping, so madvise(MADV_DONTNEED)
// only takes them out of this process's page tables (a later read faults them in again from the
// page cache, unchanged); until then each process's PSS counts every page of the blob it
// touched, about its own role's bundle and cache (1-4 MiB). Node has no madvise: koffi calls it,
// so only the roles that load koffi anyway (NATIVE_ROLES) give theirs back.
import fs from 'node:fs';
import type { Koffi } from './native.ts';

const PT_LOAD = 1;
const PT_NOTE = 4;
const ET_EXEC = 2;
const MADV_DONTNEED = 4;
const SC_PAGESIZE = 30; // glibc's _SC_PAGESIZE on Linux, x86_64 and aarch64 alike

export interface Range {
  start: number;
  length: number;
}

/**
 * Where the SEA blob is loaded, from the executable's ELF header and program headers (`head`
 * must hold both; readSeaHeaders reads them). postject adds the blob as a PT_NOTE with a PT_LOAD
 * of its own at the same file offset. Only a fixed-address executable (ET_EXEC, as Node's
 * official Linux builds are) says where that is: undefined otherwise, or when there is no blob.
 */
export function seaBlobRange(head: Buffer): Range | undefined {
  if (head.length < 64 || head.readUInt32BE(0) !== 0x7f454c46 || head[4] !== 2 || head[5] !== 1) return undefined; // 64-bit little-endian ELF only
  if (head.readUInt16LE(16) !== ET_EXEC) return undefined;
  const phoff = Number(head.readBigUInt64LE(32));
  const phentsize = head.readUInt16LE(54);
  const phnum = head.readUInt16LE(56);
  if (phoff + phnum * phentsize > head.length) return undefined;
  const headers = Array.from({ length: phnum }, (_, i) => {
    const at = phoff + i * phentsize;
    return { type: head.readUInt32LE(at), offset: Number(head.readBigUInt64LE(at + 8)), vaddr: Number(head.readBigUInt64LE(at + 16)), memsz: Number(head.readBigUInt64LE(at + 40)) };
  });
  const load = headers.find((h) => h.type === PT_LOAD && headers.some((n) => n.type === PT_NOTE && n.offset === h.offset && n.vaddr === h.vaddr));
  return load && load.memsz > 0 ? { start: load.vaddr, length: load.memsz } : undefined;
}

/** The ELF header and the program headers of `file` (they may sit anywhere in it: postject moves them to the end). */
export function readSeaHeaders(file: string): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const elf = Buffer.alloc(64);
    fs.readSync(fd, elf, 0, 64, 0);
    if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2) return elf;
    const phoff = Number(elf.readBigUInt64LE(32));
    const size = elf.readUInt16LE(54) * elf.readUInt16LE(56);
    // One buffer laid out as the file is, so that seaBlobRange reads offsets as they are.
    const head = Buffer.alloc(phoff + size);
    elf.copy(head);
    fs.readSync(fd, head, phoff, size, phoff);
    return head;
  } finally {
    fs.closeSync(fd);
  }
}

/** The whole pages inside `range`. */
export function wholePages(range: Range, pageSize: number): Range | undefined {
  const start = Math.ceil(range.start / pageSize) * pageSize;
  const end = Math.floor((range.start + range.length) / pageSize) * pageSize;
  return end > start ? { start, length: end - start } : undefined;
}

/** Gives back this process's pages of the SEA blob of `executable`; returns how many bytes of address space that covered (0 when there is no blob to find). */
export function releaseSeaBlob(k: Koffi, executable = process.execPath): number {
  const blob = seaBlobRange(readSeaHeaders(executable));
  if (!blob) return 0;
  const libc = k.load('libc.so.6');
  const pageSize = Number(libc.func('long sysconf(int name)')(SC_PAGESIZE));
  const pages = wholePages(blob, pageSize);
  if (!pages) return 0;
  const madvise = libc.func('int madvise(uintptr_t addr, size_t length, int advice)');
  if (madvise(pages.start, pages.length, MADV_DONTNEED) !== 0) throw new Error(`madvise(MADV_DONTNEED) of the SEA blob at 0x${pages.start.toString(16)}: errno ${k.errno()}`);
  return pages.length;
}
