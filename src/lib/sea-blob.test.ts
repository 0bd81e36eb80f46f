import { describe, expect, it } from 'vitest';
import { seaBlobRange, wholePages } from './sea-blob.ts';

type Phdr = { type: number; offset: number; vaddr: number; memsz: number };

/** A 64-bit little-endian ELF header with its program headers at `phoff`, as postject leaves a binary. */
function elf(phdrs: Phdr[], { type = 2, phoff = 0x200 } = {}): Buffer {
  const b = Buffer.alloc(phoff + phdrs.length * 56);
  b.writeUInt32BE(0x7f454c46, 0);
  b[4] = 2; // ELFCLASS64
  b[5] = 1; // little-endian
  b.writeUInt16LE(type, 16);
  b.writeBigUInt64LE(BigInt(phoff), 32);
  b.writeUInt16LE(56, 54);
  b.writeUInt16LE(phdrs.length, 56);
  phdrs.forEach((p, i) => {
    const at = phoff + i * 56;
    b.writeUInt32LE(p.type, at);
    b.writeBigUInt64LE(BigInt(p.offset), at + 8);
    b.writeBigUInt64LE(BigInt(p.vaddr), at + 16);
    b.writeBigUInt64LE(BigInt(p.memsz), at + 40);
  });
  return b;
}

// Node's own segments, with its build-id note inside the first PT_LOAD, and the blob postject adds.
const NODE = [
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
    expect(seaBlobRange(elf([...NODE, ...BLOB]))).toEqual({ start: 0xe7c0000, length: 0xbb0000 });
  });
  it('finds nothing in a plain Node binary, a position-independent one, or what is not a 64-bit little-endian ELF', () => {
    expect(seaBlobRange(elf(NODE))).toBeUndefined();
    expect(seaBlobRange(elf([...NODE, ...BLOB], { type: 3 }))).toBeUndefined();
    expect(seaBlobRange(Buffer.from('#!/bin/sh\n'))).toBeUndefined();
    const big = elf([...NODE, ...BLOB]);
    big[5] = 2;
    expect(seaBlobRange(big)).toBeUndefined();
  });
  it('finds nothing when the program headers are cut short', () => {
    expect(seaBlobRange(elf([...NODE, ...BLOB]).subarray(0, 0x200 + 56))).toBeUndefined();
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
