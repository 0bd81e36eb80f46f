// Random and truncated input for every parser udevd runs on data it does not control: uevent
// messages, GPT headers and entry arrays, superblocks. Seeded, so a failure repeats; bounded in
// time. Nothing may throw, and what is accepted must be sane.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { StatePublisher } from '../daemon/publisher.ts';
import { MemoryState } from '../state/memory.ts';
import { type Reader } from '../disk/block-reader.ts';
import { populate } from '../disk/testing-sysfs.ts';
import { readPartitionTable } from '../disk/gpt-read.ts';
import { ManualUeventSource } from './uevent-socket.ts';
import { probeFilesystem } from '../disk/superblocks.ts';
import { buildGpt, ext4Superblock, fatImage, isoImage, prng, squashfsSuperblock, xfsSuperblock } from '../disk/testing-images.ts';
import { formatUevent, parseUevent } from './uevent.ts';
import { Udevd } from './udevd.ts';

const SEED = Number(process.env.BRONZE_FUZZ_SEED ?? 0x5eed);
const rnd = prng(SEED);
const int = (n: number) => Math.floor(rnd() * n);
const pick = <T>(a: readonly T[]): T => a[int(a.length)]!;

/** A reader over `base` with some bytes changed and the device cut short, without copying base. */
function mutated(base: Buffer, changes: Map<number, number>, size: number): Reader {
  return {
    size,
    read: async (offset, length) => {
      if (!(offset >= 0) || !(length > 0) || offset >= size) return Buffer.alloc(0);
      const end = Math.min(size, offset + length);
      const out = Buffer.alloc(end - offset);
      base.copy(out, 0, Math.min(offset, base.length), Math.min(end, base.length));
      for (const [o, b] of changes) if (o >= offset && o < end) out[o - offset] = b;
      return out;
    },
  };
}

function randomChanges(regions: Array<[number, number]>, count: number): Map<number, number> {
  const m = new Map<number, number>();
  for (let i = 0; i < count; i++) {
    const [start, len] = pick(regions);
    const v = pick([0, 0xff, 0x80, 0x7f, 1, int(256), int(256)]);
    m.set(start + int(len), v);
  }
  return m;
}

const VALID_UEVENTS = [
  formatUevent('add', '/devices/virtual/block/loop3', { SUBSYSTEM: 'block', MAJOR: '7', MINOR: '3', DEVNAME: 'loop3', DEVTYPE: 'disk', SEQNUM: '42' }),
  formatUevent('remove', '/devices/pci0000:00/0000:00:04.0/virtio2/block/vda/vda1', { SUBSYSTEM: 'block', DEVNAME: 'vda1', DEVTYPE: 'partition', PARTN: '1' }),
  formatUevent('change', '/devices/pci0000:00/0000:00:04.0/virtio2/block/vda', { SUBSYSTEM: 'block', DEVNAME: 'vda', DISK_MEDIA_CHANGE: '1' }),
  formatUevent('move', '/devices/virtual/net/eth1', { SUBSYSTEM: 'net', DEVPATH_OLD: '/devices/virtual/net/eth0', INTERFACE: 'eth1' }),
  Buffer.concat([Buffer.from('libudev\0'), Buffer.alloc(40, 7)]),
];

function fuzzUevent(): Buffer {
  const base = pick(VALID_UEVENTS);
  switch (int(5)) {
    case 0:
      return base.subarray(0, int(base.length + 1)); // truncated
    case 1: {
      const b = Buffer.from(base);
      for (let i = int(4) + 1; i > 0; i--) b[int(b.length)] = pick([0, 0x3d, 0x40, 0x2f, 0x2e, int(256)]);
      return b;
    }
    case 2: {
      const at = int(base.length);
      const junk = Buffer.from(Array.from({ length: int(16) + 1 }, () => int(256)));
      return Buffer.concat([base.subarray(0, at), junk, base.subarray(at)]);
    }
    case 3:
      return Buffer.from(Array.from({ length: int(300) }, () => int(256)));
    default: {
      // Plausible structure with random fields.
      const action = pick(['add', 'remove', 'change', 'move', 'bind', 'x', '']);
      const devpath = pick(['/devices/virtual/block/loop0', '/devices/a/../b', '/', 'noslash', '/devices/virtual/block/nope', `/devices/${'x'.repeat(int(5000))}`]);
      return formatUevent(action, devpath, { SUBSYSTEM: pick(['block', 'net', '']), DEVNAME: pick(['loop0', '', '../../etc']), SEQNUM: pick(['1', '-1', '99999999999999999999', 'abc']) });
    }
  }
}

describe('fuzz', () => {
  const tmp: string[] = [];
  afterAll(() => {
    for (const d of tmp) fs.rmSync(d, { recursive: true, force: true });
  });

  it('uevent parser: 12,000 random and truncated messages', () => {
    const t0 = Date.now();
    const kinds = { event: 0, libudev: 0, malformed: 0 };
    for (let i = 0; i < 12_000; i++) {
      const res = parseUevent(fuzzUevent());
      kinds[res.kind]++;
      if (res.kind === 'event') {
        expect(res.event.devpath.startsWith('/')).toBe(true);
        expect(res.event.devpath.split('/')).not.toContain('..');
        expect(res.event.subsystem).not.toBe('');
      }
    }
    expect(kinds.event).toBeGreaterThan(100);
    expect(kinds.malformed).toBeGreaterThan(1000);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('udevd survives 3,000 fuzzed messages end to end', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'udevd-fuzz-'));
    tmp.push(root);
    populate(path.join(root, 'sys'));
    fs.mkdirSync(path.join(root, 'nodes'));
    const errors: string[] = [];
    const source = new ManualUeventSource();
    const udevd = await Udevd.start({
      publisher: new StatePublisher(new MemoryState(), 'udevd'),
      log: { info: () => {}, warn: () => {}, error: (m) => errors.push(m) },
      sysRoot: path.join(root, 'sys'),
      nodeRoot: path.join(root, 'nodes'),
      devRoot: path.join(root, 'dev'),
      source,
      trigger: false,
    });
    try {
      for (let i = 0; i < 3000; i++) source.push(fuzzUevent());
      await udevd.settled();
      expect(errors).toEqual([]);
      expect(udevd.stats.received).toBe(3000);
      expect(udevd.stats.malformed).toBeGreaterThan(0);
    } finally {
      await udevd.stop();
    }
  });

  it('GPT reader: 6,000 damaged and truncated tables', async () => {
    const t0 = Date.now();
    const img = buildGpt({
      sectors: 256,
      diskGuid: '6d1f0a24-3b8e-4c5b-9a0e-2f7d3c1b5a49',
      partitions: [
        { type: 'c12a7328-f81f-11d2-ba4b-00a0c93ec93b', uuid: '11111111-2222-4333-8444-555555555555', name: 'EFI', first: 40, last: 99 },
        { type: '0fc63daf-8483-4772-8e79-3d69d8477de4', uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', name: 'STATE', first: 100, last: 200 },
      ],
    });
    const hdr = 512;
    const backup = img.length - 512;
    let found = 0;
    for (let i = 0; i < 6000; i++) {
      const changes = randomChanges(
        [
          [446, 66], // protective MBR entries and signature
          [hdr, 92], // primary header
          [1024, 256], // first entries
          [backup, 92], // backup header
        ],
        int(6) + 1,
      );
      let base = img;
      if (rnd() < 0.5) {
        // Re-sign the damaged primary header (and array), so the parser goes past the CRC checks.
        base = Buffer.from(img);
        for (const [o, b] of changes) base[o] = b;
        changes.clear();
        const count = Math.min(base.readUInt32LE(hdr + 80), 4096);
        const esz = base.readUInt32LE(hdr + 84);
        const entriesLba = Number(base.readBigUInt64LE(hdr + 72) % 1024n);
        if (esz >= 128 && esz <= 1024 && count * esz <= 1 << 16 && entriesLba * 512 + count * esz <= base.length) {
          base.writeUInt32LE(zlib.crc32(base.subarray(entriesLba * 512, entriesLba * 512 + count * esz)), hdr + 88);
        }
        const hsize = Math.min(Math.max(base.readUInt32LE(hdr + 12), 92), 512);
        base.writeUInt32LE(0, hdr + 16);
        base.writeUInt32LE(zlib.crc32(base.subarray(hdr, hdr + hsize)), hdr + 16);
      }
      const size = rnd() < 0.3 ? int(base.length + 1) : base.length;
      const t = await readPartitionTable(mutated(base, changes, size));
      if (t) {
        found++;
        for (const p of t.partitions) {
          expect(p.number).toBeGreaterThanOrEqual(1);
          expect(p.size).toBeGreaterThan(0);
          expect(Number.isSafeInteger(p.start)).toBe(true);
        }
      }
    }
    expect(found).toBeGreaterThan(100);
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  it('superblock probes: 6,000 damaged and truncated superblocks', async () => {
    const t0 = Date.now();
    const images: Array<[Buffer, Array<[number, number]>]> = [
      [xfsSuperblock({ uuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', label: 'x' }), [[0, 128]]],
      [ext4Superblock({ uuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', label: 'x' }), [[1024, 160]]],
      [squashfsSuperblock(), [[0, 40]]],
      [isoImage({ label: 'ISO', joliet: 'Iso' }), [[0x8000, 900], [0x8800, 900], [0x9000, 8]]],
      [fatImage({ fat32: false, serial: 1, dirLabel: 'A' }), [[0, 512], [(4 + 64) * 512, 64]]],
      [fatImage({ fat32: true, serial: 1, dirLabel: 'B' }), [[0, 512], [32 * 512, 16], [(32 + 2018) * 512, 64]]],
    ];
    let found = 0;
    for (let i = 0; i < 6000; i++) {
      const [img, regions] = images[i % images.length]!;
      const changes = randomChanges(regions, int(8) + 1);
      const size = rnd() < 0.3 ? int(Math.min(img.length, 0x9800) + 1) : img.length;
      const fs = await probeFilesystem(mutated(img, changes, size));
      if (fs) {
        found++;
        expect(typeof fs.label).toBe('string');
        expect(typeof fs.uuid).toBe('string');
      }
    }
    expect(found).toBeGreaterThan(500);
    expect(Date.now() - t0).toBeLessThan(20_000);
  });
});
