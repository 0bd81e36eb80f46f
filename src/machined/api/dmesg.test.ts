import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dmesgHandlers, formatKmsgRecord, parseKmsgChunk, parseKmsgRecord, rfc3339Nano } from './dmesg.ts';
import { callStream, collect } from './testing.ts';

const BOOT = Date.UTC(2024, 4, 1, 10, 0, 0) * 1000; // µs

describe('kmsg records', () => {
  it('parses prio (facility, level), seq, µs and the message', () => {
    expect(parseKmsgRecord('6,339,5140900,-;NET: Registered protocol family 10')).toEqual({
      facility: 0,
      level: 6,
      seq: 339,
      usec: 5140900,
      message: 'NET: Registered protocol family 10',
    });
    expect(parseKmsgRecord('30,1,2,-,caller=T1;machined[1]: hello; world')).toMatchObject({ facility: 3, level: 6, message: 'machined[1]: hello; world' });
    expect(parseKmsgRecord('no semicolon')).toBeUndefined();
  });

  it('chunks: continuation lines skipped, partial last line kept', () => {
    const { records, rest } = parseKmsgChunk('6,1,10,-;one\n SUBSYSTEM=pci\n DEVICE=+pci:0000\n4,2,20,-;two\n3,3,3');
    expect(records.map((r) => r.message)).toEqual(['one', 'two']);
    expect(rest).toBe('3,3,3');
  });

  it('RFC 3339 with nanoseconds, trailing zeros dropped, as Go prints it', () => {
    expect(rfc3339Nano(BOOT + 123456)).toBe('2024-05-01T10:00:00.123456Z');
    expect(rfc3339Nano(BOOT + 120000)).toBe('2024-05-01T10:00:00.12Z');
    expect(rfc3339Nano(BOOT + 5_000_000)).toBe('2024-05-01T10:00:05Z');
  });

  it('formats as Talos: facility, level right-aligned in 7, time, message', () => {
    expect(formatKmsgRecord({ facility: 0, level: 6, seq: 1, usec: 1_500_000, message: 'Linux version 6.12' }, BOOT)).toBe(
      'kern:    info: [2024-05-01T10:00:01.5Z]: Linux version 6.12',
    );
    expect(formatKmsgRecord({ facility: 3, level: 3, seq: 1, usec: 0, message: 'x' }, BOOT)).toBe('daemon:     err: [2024-05-01T10:00:00Z]: x');
    expect(formatKmsgRecord({ facility: 1, level: 4, seq: 1, usec: 0, message: 'x' }, BOOT)).toBe('user: warning: [2024-05-01T10:00:00Z]: x');
  });
});

describe('Dmesg', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-kmsg-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, content);
    return p;
  };
  const text = (msgs: Array<{ bytes: Buffer }>) => msgs.map((m) => m.bytes.toString());

  it('streams every record from the start', async () => {
    const h = dmesgHandlers({ kmsgPath: file('all', '6,1,1000000,-;first\n SUBSYSTEM=x\n4,2,2000000,-;second\n'), bootTimeUsec: () => BOOT });
    expect(text(await collect(h.Dmesg, {}))).toEqual(['kern:    info: [2024-05-01T10:00:01Z]: first', 'kern: warning: [2024-05-01T10:00:02Z]: second']);
  });

  it('follow: new records as they arrive, a partial record once complete; tail skips the old ones', async () => {
    const p = file('follow', '6,1,0,-;old\n');
    const h = dmesgHandlers({ kmsgPath: p, bootTimeUsec: () => BOOT, pollMs: 10 });
    const s = callStream(h.Dmesg, { follow: true, tail: true });
    await new Promise((r) => setTimeout(r, 30));
    fs.appendFileSync(p, '6,2,0,-;ne');
    await new Promise((r) => setTimeout(r, 30));
    fs.appendFileSync(p, 'w\n');
    await s.waitFor(1);
    expect(text(s.messages)).toEqual(['kern:    info: [2024-05-01T10:00:00Z]: new']);
    s.cancel();
    await s.done;
    expect(s.error).toBeUndefined();
  });

  it('an unreadable kernel log is UNAVAILABLE, naming it', async () => {
    const missing = path.join(dir, 'no-kmsg');
    const h = dmesgHandlers({ kmsgPath: missing, bootTimeUsec: () => BOOT });
    await expect(collect(h.Dmesg, {})).rejects.toMatchObject({ code: 14, message: expect.stringContaining(`the kernel log cannot be read: ${missing}`) });
  });

  let kmsgReadable = false;
  try {
    fs.closeSync(fs.openSync('/dev/kmsg', fs.constants.O_RDONLY | fs.constants.O_NONBLOCK));
    kmsgReadable = true;
  } catch {
    // not root, or no /dev/kmsg: covered by the UNAVAILABLE test
  }
  it.runIf(kmsgReadable)('reads the real /dev/kmsg', async () => {
    const lines = text(await collect(dmesgHandlers().Dmesg, {}));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0]).toMatch(/^[a-z0-9-]+: {0,6}[a-z]+: \[\d{4}-\d\d-\d\dT[\d:.]+Z\]: /);
  });
});
