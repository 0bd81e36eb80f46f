// The device-mapper requests and replies as the kernel lays them out (drivers/md/dm-ioctl.c):
// the ioctls on real devices run under QEMU (test/e2e/verity.test.ts, the encryption e2e);
// this host's kernel has no device-mapper.
import { describe, expect, it } from 'vitest';
import { DM_BUFFER_FULL_FLAG, DM_SECURE_DATA_FLAG, DM_STATUS_TABLE_FLAG, parseTableStatus, parseVerityTable, tableLoadRequest, tableStatusRequest } from './devmapper.ts';

const TABLE = '1 7:0 7:0 4096 4096 7193 7194 sha256 4f0c8a1e2b3d4c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6 9d2f 1 check_at_most_once';

/** A reply with one target per entry, as retrieve_status writes it. */
function reply(targets: Array<{ start: number; length: number; type: string; text: string }>, flags = 1, dev = (254n << 8n) | 0n): Buffer {
  const b = tableStatusRequest('bronze-root', DM_STATUS_TABLE_FLAG);
  let at = 312;
  for (const t of targets) {
    b.writeBigUInt64LE(BigInt(t.start), at);
    b.writeBigUInt64LE(BigInt(t.length), at + 8);
    b.write(t.type, at + 24);
    const text = Buffer.from(t.text + '\0');
    text.copy(b, at + 40);
    const end = at + 40 + text.length;
    const next = (end + 7) & ~7;
    b.writeUInt32LE(next - 312, at + 20);
    b.writeUInt32LE(end, 12);
    at = next;
  }
  b.writeUInt32LE(targets.length, 20);
  b.writeUInt32LE(flags, 28);
  b.writeBigUInt64LE(dev, 40);
  return b;
}

describe('device-mapper DM_TABLE_STATUS', () => {
  it('asks for a device by name, interface 4, the data after struct dm_ioctl', () => {
    const b = tableStatusRequest('bronze-root', DM_STATUS_TABLE_FLAG, 4096);
    expect([b.readUInt32LE(0), b.readUInt32LE(4), b.readUInt32LE(8)]).toEqual([4, 0, 0]);
    expect(b.readUInt32LE(12)).toBe(4096);
    expect(b.readUInt32LE(16)).toBe(312);
    expect(b.readUInt32LE(28)).toBe(DM_STATUS_TABLE_FLAG);
    expect(b.toString('utf8', 48, 59)).toBe('bronze-root');
    expect(b[59]).toBe(0);
    expect(() => tableStatusRequest('x'.repeat(128), 0)).toThrow(/longer than 127 bytes/);
  });

  it('reads the device, its read-only flag and each target', () => {
    const d = parseTableStatus(reply([{ start: 0, length: 7193 * 8, type: 'verity', text: TABLE }]));
    expect(d).toEqual({ name: 'bronze-root', major: 254, minor: 0, readOnly: true, targets: [{ start: 0, length: 7193 * 8, type: 'verity', text: TABLE }] });
    // A minor above 255 (huge_encode_dev keeps its high bits above the major).
    expect(parseTableStatus(reply([], 0, (0x12n << 20n) | (253n << 8n) | 0x34n))).toMatchObject({ major: 253, minor: 0x1234, readOnly: false });
    const two = parseTableStatus(reply([{ start: 0, length: 8, type: 'linear', text: '7:0 0' }, { start: 8, length: 8, type: 'verity', text: 'V' }]));
    expect(two.targets.map((t) => [t.start, t.type, t.text])).toEqual([[0, 'linear', '7:0 0'], [8, 'verity', 'V']]);
  });

  it('refuses a reply that did not fit or does not add up', () => {
    expect(() => parseTableStatus(reply([{ start: 0, length: 8, type: 'verity', text: 'V' }], 1 | DM_BUFFER_FULL_FLAG))).toThrow(/did not fit/);
    const b = reply([{ start: 0, length: 8, type: 'verity', text: 'V' }]);
    b.writeUInt32LE(3, 20);
    expect(() => parseTableStatus(b)).toThrow(/target 1 lies outside/);
    expect(() => parseTableStatus(Buffer.alloc(100))).toThrow(/shorter than struct dm_ioctl/);
  });

  it('reads a dm-verity table line', () => {
    expect(parseVerityTable(TABLE)).toEqual({
      version: 1, dataDevice: '7:0', hashDevice: '7:0', dataBlockSize: 4096, hashBlockSize: 4096, dataBlocks: 7193, hashStartBlock: 7194,
      algorithm: 'sha256', rootHash: '4f0c8a1e2b3d4c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6', salt: '9d2f', options: ['check_at_most_once'],
    });
    expect(parseVerityTable('1 7:0 7:1 4096 4096 10 1 sha256 ab cd').options).toEqual([]);
    expect(() => parseVerityTable('V')).toThrow(/not a dm-verity table/);
    expect(() => parseVerityTable('1 7:0 7:0 4k 4096 10 1 sha256 ab cd')).toThrow(/data block size "4k" is not a number/);
  });
});

describe('device-mapper DM_TABLE_LOAD', () => {
  it('lays one target out after struct dm_ioctl, its parameters NUL-terminated and padded to 8 bytes', () => {
    const params = 'aes-xts-plain64 00ff 0 /dev/vda5 32768';
    const b = tableLoadRequest('luks2-STATE', { length: 1000, type: 'crypt', params }, DM_SECURE_DATA_FLAG);
    expect(b.length % 8).toBe(0);
    expect(b.readUInt32LE(12)).toBe(b.length);
    expect(b.readUInt32LE(16)).toBe(312);
    expect(b.readUInt32LE(20)).toBe(1);
    expect(b.readUInt32LE(28)).toBe(DM_SECURE_DATA_FLAG);
    expect(b.toString('utf8', 48, 59)).toBe('luks2-STATE');
    expect(b.readBigUInt64LE(312)).toBe(0n);
    expect(b.readBigUInt64LE(320)).toBe(1000n);
    expect(b.readUInt32LE(332)).toBe(b.length - 312);
    expect(b.toString('utf8', 336, 341)).toBe('crypt');
    expect(b.toString('utf8', 352, 352 + params.length)).toBe(params);
    expect(b[352 + params.length]).toBe(0);
    // What the kernel would hand back for it reads as the same target.
    const dev = parseTableStatus(b);
    expect(dev.targets).toEqual([{ start: 0, length: 1000, type: 'crypt', text: params }]);
    expect(() => tableLoadRequest('x', { length: 1, type: 'a-very-long-target', params: '' }, 0)).toThrow(/longer than 15 bytes/);
  });
});
