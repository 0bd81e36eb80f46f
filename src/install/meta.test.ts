import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import {
  META_HEADER_SIZE,
  META_SIZE,
  type MetaDevice,
  MetaStore,
  decodeMetaCopy,
  encodeMetaCopy,
  fdDevice,
  readMeta,
  writeMeta,
} from './meta.ts';
import { sparseFile, tmpDir } from './testing.ts';

const HALF = META_SIZE / 2;
const tmp = tmpDir('meta');
afterAll(() => tmp.remove());
let n = 0;

/** A zeroed sparse image of `bytes` bytes. */
function image(bytes = META_SIZE): string {
  const f = path.join(tmp.dir, `meta${n++}.raw`);
  sparseFile(f, bytes);
  return f;
}

function poke(file: string, offset: number, bytes: Buffer): void {
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, bytes, 0, bytes.length, offset);
  fs.closeSync(fd);
}

function flipByte(file: string, offset: number): void {
  const b = fs.readFileSync(file);
  poke(file, offset, Buffer.from([b[offset]! ^ 0x5a]));
}

/** decodeMetaCopy on a file. */
function decodeAt(file: string, offset: number) {
  const fd = fs.openSync(file, 'r');
  try {
    return decodeMetaCopy(fdDevice(fd), offset, HALF);
  } finally {
    fs.closeSync(fd);
  }
}

/** A copy with a valid CRC around any payload bytes (the format, spelled out again). */
function rawCopy(payload: string, sequence: bigint, version = 1): Buffer {
  const p = Buffer.from(payload);
  const h = Buffer.alloc(32);
  h.write('BRONZEMETA', 0, 'latin1');
  h.writeUInt16LE(version, 10);
  h.writeBigUInt64LE(sequence, 16);
  h.writeUInt32LE(p.length, 24);
  h.writeUInt32LE(zlib.crc32(Buffer.concat([h.subarray(0, 28), p])), 28);
  return Buffer.concat([h, p]);
}

describe('encodeMetaCopy', () => {
  it('writes the documented header and a sorted JSON payload', () => {
    const b = encodeMetaCopy(new Map([['b', '2'], ['a', '1']]), 7n, HALF);
    expect(b.toString('latin1', 0, 10)).toBe('BRONZEMETA');
    expect(b.readUInt16LE(10)).toBe(1);
    expect(b.readUInt32LE(12)).toBe(0);
    expect(b.readBigUInt64LE(16)).toBe(7n);
    expect(b.subarray(META_HEADER_SIZE).toString()).toBe('{"a":"1","b":"2"}');
    expect(b.readUInt32LE(24)).toBe(17);
    expect(b).toEqual(rawCopy('{"a":"1","b":"2"}', 7n));
  });
});

describe('readMeta / writeMeta', () => {
  it('reads an all-zero partition as an empty store, not corrupt', () => {
    expect(readMeta(image())).toEqual({ values: new Map(), sequence: 0n, copy: undefined, damaged: [], corrupt: false });
  });

  it('writes the first copy first, then alternates, keeping the previous values in the other copy', () => {
    const f = image();
    expect(writeMeta(f, { a: '1' })).toMatchObject({ copy: 0, sequence: 1n });
    expect(readMeta(f)).toEqual({ values: new Map([['a', '1']]), sequence: 1n, copy: 0, damaged: [], corrupt: false });
    expect(writeMeta(f, { a: '2' })).toMatchObject({ copy: 1, sequence: 2n });
    expect(writeMeta(f, new Map([['a', '3'], ['b', 'x']]))).toMatchObject({ copy: 0, sequence: 3n });
    expect(readMeta(f)).toMatchObject({ values: new Map([['a', '3'], ['b', 'x']]), sequence: 3n, copy: 0 });
    expect(decodeAt(f, HALF)).toEqual({ kind: 'valid', sequence: 2n, values: new Map([['a', '2']]) });
  });

  it('falls back to the older copy when the newest is damaged (a torn write)', () => {
    const f = image();
    writeMeta(f, { slot: 'A' });
    writeMeta(f, { slot: 'B' }); // copy 1
    flipByte(f, HALF + META_HEADER_SIZE + 3); // inside copy 1's payload
    expect(readMeta(f)).toEqual({ values: new Map([['slot', 'A']]), sequence: 1n, copy: 0, damaged: [1], corrupt: false });
    // The next write replaces the damaged copy, never the good one.
    expect(writeMeta(f, { slot: 'C' })).toMatchObject({ copy: 1, sequence: 2n, damaged: [] });
    expect(readMeta(f)).toMatchObject({ values: new Map([['slot', 'C']]), copy: 1, damaged: [] });
  });

  it('treats a half-written header as damaged', () => {
    const f = image();
    writeMeta(f, { a: '1' });
    poke(f, HALF, Buffer.from('BRONZE')); // the start of a new copy, nothing more
    expect(readMeta(f)).toMatchObject({ values: new Map([['a', '1']]), copy: 0, damaged: [1], corrupt: false });
  });

  it('reports corruption when no copy is valid and returns an empty store', () => {
    const f = image();
    writeMeta(f, { a: '1' });
    writeMeta(f, { a: '2' });
    flipByte(f, 20); // sequence of copy 0
    flipByte(f, HALF + 28); // CRC of copy 1
    expect(readMeta(f)).toEqual({ values: new Map(), sequence: 0n, copy: undefined, damaged: [0, 1], corrupt: true });
    // Writing afterwards starts over in copy 0.
    expect(writeMeta(f, { a: 'new' })).toMatchObject({ copy: 0, sequence: 1n, corrupt: false, damaged: [1] });
    expect(readMeta(f)).toMatchObject({ values: new Map([['a', 'new']]), damaged: [1], corrupt: false });
  });

  it('reports random bytes as corrupt', () => {
    const f = image();
    poke(f, 0, Buffer.alloc(64, 0xa7));
    poke(f, HALF, Buffer.alloc(64, 0xff));
    expect(readMeta(f)).toMatchObject({ corrupt: true, damaged: [0, 1] });
  });

  it('rejects copies that are well formed but not what this version reads', () => {
    const cases: [Buffer, string][] = [
      [rawCopy('{"a":"1"}', 1n, 2), 'unknown version 2'],
      [rawCopy('{"a":1}', 1n), 'value of a is not a string'],
      [rawCopy('["a"]', 1n), 'payload is not an object'],
      [rawCopy('null', 1n), 'payload is not an object'],
      [rawCopy('{"a":', 1n), 'payload is not JSON'],
    ];
    for (const [bytes, reason] of cases) {
      const f = image();
      poke(f, 0, bytes);
      expect(decodeAt(f, 0)).toEqual({ kind: 'damaged', reason });
      expect(readMeta(f)).toMatchObject({ corrupt: true, damaged: [0] });
    }
    const big = rawCopy('{}', 1n);
    big.writeUInt32LE(HALF, 24);
    const f = image();
    poke(f, 0, big);
    expect(decodeAt(f, 0)).toEqual({ kind: 'damaged', reason: `payload length ${HALF} too large` });
  });

  it('takes the higher sequence whichever copy holds it', () => {
    const f = image();
    poke(f, 0, rawCopy('{"v":"new"}', 9n));
    poke(f, HALF, rawCopy('{"v":"old"}', 8n));
    expect(readMeta(f)).toMatchObject({ values: new Map([['v', 'new']]), copy: 0, sequence: 9n });
    expect(writeMeta(f, { v: 'newer' })).toMatchObject({ copy: 1, sequence: 10n });
  });

  it('refuses values that do not fit in a copy, writing nothing', () => {
    const f = image();
    writeMeta(f, { keep: 'me' });
    const before = fs.readFileSync(f);
    const overhead = '{"k":""}'.length;
    expect(() => writeMeta(f, { k: 'x'.repeat(HALF - META_HEADER_SIZE - overhead + 1) })).toThrow(
      `META: the values take ${HALF - META_HEADER_SIZE + 1} bytes, a copy holds at most ${HALF - META_HEADER_SIZE} (1 keys)`,
    );
    expect(fs.readFileSync(f).equals(before)).toBe(true);
    // Exactly full fits.
    writeMeta(f, { k: 'x'.repeat(HALF - META_HEADER_SIZE - overhead) });
    expect(readMeta(f).values.get('k')).toHaveLength(HALF - META_HEADER_SIZE - overhead);
  });

  it('works at an offset inside a larger image and with a smaller region, through an fd', () => {
    const f = image(1 << 20);
    const fd = fs.openSync(f, 'r+');
    try {
      writeMeta(fd, { a: '1' }, 4096, 8192);
      writeMeta(fd, { a: '2' }, 4096, 8192);
      expect(readMeta(fd, 4096, 8192)).toMatchObject({ values: new Map([['a', '2']]), copy: 1 });
    } finally {
      fs.closeSync(fd);
    }
    const all = fs.readFileSync(f);
    expect(all.subarray(0, 4096).every((b) => b === 0)).toBe(true);
    expect(all.toString('latin1', 4096, 4106)).toBe('BRONZEMETA');
    expect(all.toString('latin1', 4096 + 4096, 4096 + 4106)).toBe('BRONZEMETA');
    expect(all.subarray(4096 + 8192).every((b) => b === 0)).toBe(true);
    expect(() => readMeta(f, 0, 101)).toThrow(/region size 101/);
    expect(() => readMeta(f, -1)).toThrow(/offset -1/);
    expect(() => writeMeta(f, { a: 1 as unknown as string })).toThrow(/keys and values must be strings/);
  });

  it('syncs after every write', () => {
    const calls: string[] = [];
    const mem = Buffer.alloc(8192);
    const dev: MetaDevice = {
      read: (o, l) => Buffer.from(mem.subarray(o, o + l)),
      write: (o, b) => {
        calls.push(`write ${o}`);
        b.copy(mem, o);
      },
      sync: () => calls.push('sync'),
    };
    writeMeta(dev, { a: '1' }, 0, 8192);
    writeMeta(dev, { a: '2' }, 0, 8192);
    expect(calls).toEqual(['write 0', 'sync', 'write 4096', 'sync']);
  });
});

describe('MetaStore', () => {
  it('gets, sets, deletes and lists, writing only on change', () => {
    const f = image();
    const s = MetaStore.open(f);
    try {
      expect(s.all()).toEqual(new Map());
      expect(s.corrupt).toBe(false);
      s.set({ saved: 'A', extra: 'x' });
      expect(s.get('saved')).toBe('A');
      s.set(new Map([['saved', 'B']]));
      expect(s.all()).toEqual(new Map([['saved', 'B'], ['extra', 'x']]));
      expect(s.state.sequence).toBe(2n);
      s.set({ saved: 'B' }); // no change: no write
      s.delete(['nothing']);
      expect(s.state.sequence).toBe(2n);
      s.delete(['extra']);
      expect(s.get('extra')).toBeUndefined();
      expect(s.state).toMatchObject({ sequence: 3n, copy: 0 });
    } finally {
      s.close();
    }
    expect(readMeta(f).values).toEqual(new Map([['saved', 'B']]));
  });

  it('reports a corrupt store and reloads', () => {
    const f = image();
    poke(f, 0, Buffer.from('garbage'));
    const s = MetaStore.open(f);
    try {
      expect(s.corrupt).toBe(true);
      expect(s.all()).toEqual(new Map());
      writeMeta(f, { other: 'writer' });
      expect(s.get('other')).toBeUndefined();
      s.reload();
      expect(s.get('other')).toBe('writer');
      expect(s.corrupt).toBe(false);
    } finally {
      s.close();
    }
  });

  it('keeps keys that look like object internals', () => {
    const f = image();
    writeMeta(f, new Map([['__proto__', 'p'], ['constructor', 'c']]));
    expect(readMeta(f).values).toEqual(new Map([['__proto__', 'p'], ['constructor', 'c']]));
  });
});
