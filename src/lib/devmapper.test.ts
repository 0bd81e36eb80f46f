// The device-mapper reply as the kernel lays it out (drivers/md/dm-ioctl.c, retrieve_status):
// the ioctl on a real device runs under QEMU (test/e2e/verity.test.ts); this host's kernel has
// no device-mapper.
import { describe, expect, it } from 'vitest';
import { DM_BUFFER_FULL_FLAG, DM_STATUS_TABLE_FLAG, parseTableStatus, parseVerityTable, tableStatusRequest } from './devmapper.ts';

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
