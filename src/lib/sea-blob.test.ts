import { describe, expect, it } from 'vitest';
import { seaBlobRange, wholePages } from './sea-blob.ts';

type Phdr = { type: number; offset: number; vaddr: number; memsz: number };

/** Program headers (64-bit, little-endian) as the process has them in memory. */
function phdrs(list: Phdr[]): Buffer {
  const b = Buffer.alloc(list.length * 56);
  list.forEach((p, i) => {
    const at = i * 56;
    b.writeUInt32LE(p.type, at);
    b.writeBigUInt64LE(BigInt(p.offset), at + 8);
    b.writeBigUInt64LE(BigInt(p.vaddr), at + 16);
    b.writeBigUInt64LE(BigInt(p.memsz), at + 40);
  });
  return b;
}

// Node's own segments (as in the pinned runtime: its PT_PHDR, a build-id note inside the first
// PT_LOAD), and the blob postject adds.
const PHDR = { type: 6, offset: 0x2c43394, vaddr: 0x3043394, memsz: 0x1bcc6c };
const NODE = [
  PHDR,
  { type: 1, offset: 0, vaddr: 0x400000, memsz: 0x345de0 },
  { type: 4, offset: 0x350, vaddr: 0x400350, memsz: 0x44 },
  { type: 1, offset: 0x67515d8, vaddr: 0x6b525d8, memsz: 0x633f0 },
];
const BLOB = [
  { type: 1, offset: 0x67c0000, vaddr: 0xe7c0000, memsz: 0xbb0000 },
  { type: 4, offset: 0x67c0000, vaddr: 0xe7c0000, memsz: 0xba34a8 },
];

describe('seaBlobRange', () => {
  it("finds the PT_LOAD postject added for the blob's PT_NOTE, not Node's own notes", () => {
    expect(seaBlobRange(phdrs([...NODE, ...BLOB]), PHDR.vaddr)).toEqual({ start: 0xe7c0000, length: 0xbb0000 });
  });
  it('places it by the load bias of a position-independent executable', () => {
    expect(seaBlobRange(phdrs([...NODE, ...BLOB]), PHDR.vaddr + 0x5555_0000_0000)).toEqual({ start: 0x5555_0000_0000 + 0xe7c0000, length: 0xbb0000 });
  });
  it('finds nothing in a plain Node binary, or without a PT_PHDR to place it by', () => {
    expect(seaBlobRange(phdrs(NODE), PHDR.vaddr)).toBeUndefined();
    expect(seaBlobRange(phdrs([...NODE.slice(1), ...BLOB]), PHDR.vaddr)).toBeUndefined();
    expect(seaBlobRange(Buffer.alloc(0), 0)).toBeUndefined();
  });
});

describe('wholePages', () => {
  it('keeps only the pages wholly inside the range', () => {
    expect(wholePages({ start: 0x1000, length: 0x3000 }, 0x1000)).toEqual({ start: 0x1000, length: 0x3000 });
    expect(wholePages({ start: 0x1010, length: 0x3000 }, 0x1000)).toEqual({ start: 0x2000, length: 0x2000 });
    expect(wholePages({ start: 0x10000, length: 0x12000 }, 0x10000)).toEqual({ start: 0x10000, length: 0x10000 });
    expect(wholePages({ start: 0x1010, length: 0x800 }, 0x1000)).toBeUndefined();
  });
});
