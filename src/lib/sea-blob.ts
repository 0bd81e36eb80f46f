// The pages of the single executable's SEA blob (the role bundles, their code caches, koffi's
// native module: image-builder/sea.sh) that a process has read, given back once it has loaded
// what it needs from them. They are a private, read-only file mapping, so madvise(MADV_DONTNEED)
// only takes them out of this process's page tables (a later read faults them in again from the
// page cache, unchanged); until then each process's PSS counts every page of the blob it
// touched, about its own role's bundle and cache (1-4 MiB). Node has no madvise: koffi calls it,
// from initNative (at start in the roles that make syscalls, NATIVE_ROLES; 15 s after start in
// the others, src/role-entry.ts).
import type * as KoffiModule from 'koffi';

/** koffi as lib/native.ts loads it (named here, not imported from there: native.ts imports this file). */
type Koffi = typeof KoffiModule;

const PT_LOAD = 1;
const PT_NOTE = 4;
const PT_PHDR = 6;
const PHDR64_SIZE = 56;
const AT_PHDR = 3;
const AT_PHENT = 4;
const AT_PHNUM = 5;
const MADV_DONTNEED = 4;
const SC_PAGESIZE = 30; // glibc's _SC_PAGESIZE on Linux, x86_64 and aarch64 alike

export interface Range {
  start: number;
  length: number;
}

/**
 * Where the SEA blob is loaded, from the program headers (64-bit, little-endian) as the process
 * has them in memory at `phdrAddress` (the auxiliary vector's AT_PHDR): postject adds the blob as
 * a PT_NOTE with a PT_LOAD of its own at the same file offset. The load bias is AT_PHDR less the
 * PT_PHDR entry's address (0 for a fixed-address executable, as Node's official builds are).
 * Undefined when there is no blob, or no PT_PHDR to place it by.
 */
export function seaBlobRange(phdrs: Buffer, phdrAddress: number): Range | undefined {
  const headers = Array.from({ length: Math.floor(phdrs.length / PHDR64_SIZE) }, (_, i) => {
    const at = i * PHDR64_SIZE;
    return { type: phdrs.readUInt32LE(at), offset: Number(phdrs.readBigUInt64LE(at + 8)), vaddr: Number(phdrs.readBigUInt64LE(at + 16)), memsz: Number(phdrs.readBigUInt64LE(at + 40)) };
  });
  const self = headers.find((h) => h.type === PT_PHDR);
  const load = headers.find((h) => h.type === PT_LOAD && headers.some((n) => n.type === PT_NOTE && n.offset === h.offset && n.vaddr === h.vaddr));
  if (!self || !load || load.memsz === 0) return undefined;
  return { start: load.vaddr + (phdrAddress - self.vaddr), length: load.memsz };
}

/** The whole pages inside `range`. */
export function wholePages(range: Range, pageSize: number): Range | undefined {
  const start = Math.ceil(range.start / pageSize) * pageSize;
  const end = Math.floor((range.start + range.length) / pageSize) * pageSize;
  return end > start ? { start, length: end - start } : undefined;
}

/**
 * Gives back this process's pages of its executable's SEA blob; returns how many bytes of
 * address space that covered (0 when there is no blob). The program headers are read where the
 * process has them, not from the file: a daemon started before /proc was mounted has no path to
 * its own executable (process.execPath is then just its argv[0]).
 */
export function releaseSeaBlob(k: Koffi): number {
  const libc = k.load('libc.so.6');
  const auxPointer = libc.func('void *getauxval(unsigned long type)');
  const auxValue = libc.func('unsigned long getauxval(unsigned long type)');
  if (Number(auxValue(AT_PHENT)) !== PHDR64_SIZE) return 0; // not a 64-bit executable
  const at = auxPointer(AT_PHDR) as bigint;
  const phdrs = Buffer.from(k.view(at, Number(auxValue(AT_PHNUM)) * PHDR64_SIZE));
  const blob = seaBlobRange(phdrs, Number(at));
  if (!blob) return 0;
  const pageSize = Number(libc.func('long sysconf(int name)')(SC_PAGESIZE));
  const pages = wholePages(blob, pageSize);
  if (!pages) return 0;
  const madvise = libc.func('int madvise(uintptr_t addr, size_t length, int advice)');
  if (madvise(pages.start, pages.length, MADV_DONTNEED) !== 0) throw new Error(`madvise(MADV_DONTNEED) of the SEA blob at 0x${pages.start.toString(16)}: errno ${k.errno()}`);
  return pages.length;
}
