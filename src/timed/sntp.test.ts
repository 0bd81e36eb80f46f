import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from './clock.ts';
import { Leap, Mode, type NtpPacket, NtpDecodeError, asciiRefId, encodePacket, unixMsToNtp } from './ntp.ts';
import { BadServerError, KissOfDeathError, SntpError, checkReply, minDelaySample, parseServer, query, selectBest } from './sntp.ts';
import { FakeNtpServer, prng } from './testing.ts';

const servers: FakeNtpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
async function fake(b: Parameters<typeof FakeNtpServer.start>[0] = {}): Promise<FakeNtpServer> {
  const s = await FakeNtpServer.start(b);
  servers.push(s);
  return s;
}

const NONCE = { seconds: 0x1122_3344, fraction: 0x5566_7788 };
const T1 = 1_800_000_000_000;

function reply(over: Partial<NtpPacket> = {}, t2 = T1 + 1010, t3 = T1 + 1011): NtpPacket {
  return {
    leap: Leap.NONE,
    version: 4,
    mode: Mode.SERVER,
    stratum: 3,
    poll: 6,
    precision: -20,
    rootDelay: 0.01,
    rootDispersion: 0.02,
    referenceId: 0x0a000001,
    referenceTime: unixMsToNtp(T1 - 60_000),
    originTime: NONCE,
    receiveTime: unixMsToNtp(t2),
    transmitTime: unixMsToNtp(t3),
    ...over,
  };
}

describe('checkReply', () => {
  it('computes offset, delay and root distance from a good reply', () => {
    const m = checkReply(encodePacket(reply()), NONCE, T1, T1 + 21);
    expect(m.offsetMs).toBeCloseTo(1000, 3);
    expect(m.delayMs).toBeCloseTo(20, 3);
    expect(m.rootDistanceMs).toBeCloseTo(5 + 20 + 10, 2);
    expect(m.remoteMs).toBeCloseTo(T1 + 21 + 1000, 3);
    expect(m.stratum).toBe(3);
  });

  it('ignores replies that do not carry our nonce as origin', () => {
    const e = catchErr(() => checkReply(encodePacket(reply({ originTime: { seconds: 1, fraction: 2 } })), NONCE, T1, T1 + 21));
    expect(e).toBeInstanceOf(SntpError);
    expect((e as SntpError).reason).toBe('origin-mismatch');
  });

  it.each([
    ['bad-mode', { mode: Mode.CLIENT }],
    ['bad-mode', { mode: Mode.BROADCAST }],
    ['bad-version', { version: 0 }],
    ['bad-version', { version: 5 }],
    ['unsynchronised', { leap: Leap.UNSYNC }],
    ['bad-stratum', { stratum: 16 }],
    ['zero-timestamp', { transmitTime: { seconds: 0, fraction: 0 } }],
    ['zero-timestamp', { receiveTime: { seconds: 0, fraction: 0 } }],
    ['root-distance', { rootDelay: 4, rootDispersion: 4 }],
  ] as const)('refuses %s (%j)', (reason, over) => {
    const e = catchErr(() => checkReply(encodePacket(reply(over as Partial<NtpPacket>)), NONCE, T1, T1 + 21));
    expect(e).toBeInstanceOf(SntpError);
    expect((e as SntpError).reason).toBe(reason);
  });

  it('refuses a server that transmitted before it received, and impossible round trips', () => {
    expect((catchErr(() => checkReply(encodePacket(reply({}, T1 + 1011, T1 + 1010)), NONCE, T1, T1 + 21)) as SntpError).reason).toBe('bad-times');
    // the server held it 50 ms while we saw 21 ms
    expect((catchErr(() => checkReply(encodePacket(reply({}, T1 + 1000, T1 + 1050)), NONCE, T1, T1 + 21)) as SntpError).reason).toBe('bad-times');
  });

  it('turns stratum 0 into a kiss-o-death with its code', () => {
    for (const code of ['RATE', 'DENY', 'RSTR']) {
      const e = catchErr(() => checkReply(encodePacket(reply({ stratum: 0, leap: 3, referenceId: asciiRefId(code) })), NONCE, T1, T1 + 21));
      expect(e).toBeInstanceOf(KissOfDeathError);
      expect((e as KissOfDeathError).code).toBe(code);
    }
  });

  it('honours a custom root distance bound', () => {
    expect(() => checkReply(encodePacket(reply()), NONCE, T1, T1 + 21, { maxRootDistanceMs: 10 })).toThrow(/root distance/);
  });
});

describe('fuzzing checkReply with random, truncated and mutated packets', () => {
  it('never throws anything but its own errors, and returns only finite numbers (12,000 packets, seeded)', () => {
    const rnd = prng(0xb0c0_2025);
    const byte = () => Math.floor(rnd() * 256);
    const valid = encodePacket(reply());
    const counts = { ok: 0, decode: 0, sntp: 0, kod: 0 };
    const started = performance.now();
    for (let i = 0; i < 12_000; i++) {
      let pkt: Buffer;
      const kind = i % 4;
      if (kind === 0) {
        pkt = Buffer.from(Array.from({ length: Math.floor(rnd() * 100) }, byte)); // random bytes, any length
      } else if (kind === 1) {
        pkt = valid.subarray(0, Math.floor(rnd() * 48)); // truncated
      } else {
        pkt = Buffer.from(valid); // mutated: a few bytes changed, origin kept so the deep checks run
        // kind 2: anywhere but the origin; kind 3: the first 16 header bytes, with edge values
        const edge = [0, 1, 3, 4, 5, 15, 16, 0x80, 0xff];
        const flips = 1 + Math.floor(rnd() * 4);
        for (let f = 0; f < flips; f++) {
          let at = Math.floor(rnd() * (kind === 2 ? 48 : 16));
          if (at >= 24 && at < 32) at -= 8;
          pkt[at] = kind === 3 && rnd() < 0.7 ? edge[Math.floor(rnd() * edge.length)]! : byte();
        }
        if (rnd() < 0.2) pkt = Buffer.concat([pkt, Buffer.from(Array.from({ length: Math.floor(rnd() * 64) }, byte))]);
      }
      const t4 = T1 + rnd() * 100;
      try {
        const m = checkReply(pkt, NONCE, T1, t4);
        for (const v of [m.offsetMs, m.delayMs, m.rootDistanceMs, m.remoteMs]) expect(Number.isFinite(v)).toBe(true);
        expect(m.delayMs).toBeGreaterThanOrEqual(0);
        counts.ok++;
      } catch (err) {
        if (err instanceof NtpDecodeError) counts.decode++;
        else if (err instanceof SntpError) counts.sntp++;
        else if (err instanceof KissOfDeathError) counts.kod++;
        else throw new Error(`packet ${i} (${pkt.toString('hex')}) threw ${String(err)}`);
      }
    }
    expect(performance.now() - started).toBeLessThan(5000);
    // every path was taken
    expect(counts.ok).toBeGreaterThan(100);
    expect(counts.decode).toBeGreaterThan(3000);
    expect(counts.sntp).toBeGreaterThan(1000);
    expect(counts.kod).toBeGreaterThan(10);
  });

  it('keeps waiting through a flood of garbage datagrams and takes the real reply', async () => {
    const rnd = prng(7);
    const sock = dgram.createSocket('udp4');
    servers.push({ close: () => new Promise<void>((r) => sock.close(() => r())) } as unknown as FakeNtpServer);
    sock.on('message', (msg, rinfo) => {
      const nonce = { seconds: msg.readUInt32BE(40), fraction: msg.readUInt32BE(44) };
      for (let i = 0; i < 100; i++) {
        const junk = Buffer.from(Array.from({ length: Math.floor(rnd() * 80) }, () => Math.floor(rnd() * 256)));
        sock.send(junk, rinfo.port, rinfo.address);
      }
      const now = performance.timeOrigin + performance.now();
      sock.send(encodePacket(reply({ originTime: nonce }, now, now)), rinfo.port, rinfo.address);
    });
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
    const m = await query('127.0.0.1', sock.address().port, new SimulatedClock(), { timeoutMs: 3000 });
    expect(Math.abs(m.offsetMs)).toBeLessThan(20);
  });
});

describe('query over loopback', () => {
  it('measures the offset of a clock that is 3 s behind', async () => {
    const s = await fake({ offsetMs: 3000 });
    const m = await query(s.address, s.port, new SimulatedClock(), { timeoutMs: 1000 });
    expect(m.offsetMs).toBeGreaterThan(2990);
    expect(m.offsetMs).toBeLessThan(3010);
    expect(m.delayMs).toBeLessThan(50);
  });

  it('skips a spoofed reply and takes the one answering our nonce', async () => {
    const s = await fake({ spoofFirst: true, offsetMs: -700 });
    const m = await query(s.address, s.port, new SimulatedClock(), { timeoutMs: 1000 });
    expect(m.offsetMs).toBeCloseTo(-700, -1);
  });

  it('reports kiss-o-death, unsynchronised servers, wrong modes and zero transmit times', async () => {
    const clock = new SimulatedClock();
    const kod = await fake({ kiss: 'RATE' });
    await expect(query(kod.address, kod.port, clock)).rejects.toMatchObject({ name: 'KissOfDeathError', code: 'RATE' });
    const unsync = await fake({ leap: Leap.UNSYNC });
    await expect(query(unsync.address, unsync.port, clock)).rejects.toMatchObject({ reason: 'unsynchronised' });
    const bcast = await fake({ mode: Mode.BROADCAST });
    await expect(query(bcast.address, bcast.port, clock)).rejects.toMatchObject({ reason: 'bad-mode' });
    const zero = await fake({ zeroTransmit: true });
    await expect(query(zero.address, zero.port, clock)).rejects.toMatchObject({ reason: 'zero-timestamp' });
  });

  it('times out on silence, fails fast on a closed port, and aborts', async () => {
    const s = await fake({ drop: true });
    const t0 = performance.now();
    await expect(query(s.address, s.port, new SimulatedClock(), { timeoutMs: 200 })).rejects.toMatchObject({ reason: 'timeout' });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
    const port = s.port;
    await s.close();
    await expect(query('127.0.0.1', port, new SimulatedClock(), { timeoutMs: 2000 })).rejects.toMatchObject({ reason: 'network' });
    const ac = new AbortController();
    const silent = await fake({ drop: true });
    const p = query(silent.address, silent.port, new SimulatedClock(), { timeoutMs: 5000, signal: ac.signal });
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    await expect(query('not-an-ip', 123, new SimulatedClock())).rejects.toMatchObject({ reason: 'network' });
  });
});

describe('servers and selection', () => {
  it('parses server specs', () => {
    expect(parseServer('pool.ntp.org')).toEqual({ host: 'pool.ntp.org', port: 123 });
    expect(parseServer(' 10.0.0.1:1123 ')).toEqual({ host: '10.0.0.1', port: 1123 });
    expect(parseServer('::1')).toEqual({ host: '::1', port: 123 });
    expect(parseServer('[fe80::1]')).toEqual({ host: 'fe80::1', port: 123 });
    expect(parseServer('[2001:db8::1]:4123')).toEqual({ host: '2001:db8::1', port: 4123 });
    for (const bad of ['', 'a:b:c:x', 'host:0', 'host:70000', 'two words']) expect(() => parseServer(bad)).toThrow(BadServerError);
  });

  it('keeps the minimum-delay sample and prefers low stratum, then small root distance', () => {
    expect(minDelaySample([{ delayMs: 5, id: 'a' }, { delayMs: 2, id: 'b' }, { delayMs: 9, id: 'c' }])?.id).toBe('b');
    expect(minDelaySample([])).toBeUndefined();
    const best = selectBest([
      { stratum: 3, rootDistanceMs: 1, id: 'a' },
      { stratum: 2, rootDistanceMs: 50, id: 'b' },
      { stratum: 2, rootDistanceMs: 20, id: 'c' },
    ]);
    expect(best?.id).toBe('c');
  });
});

function catchErr(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}
