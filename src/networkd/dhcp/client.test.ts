// The client state machine against a scripted server, with a fake clock: every transition of
// RFC 2131 4.4, the retransmission schedule, expiry and release.
import { beforeEach, describe, expect, it } from 'vitest';
import { type Clock, DhcpClient, type DhcpEvent, type DhcpTransport } from './client.ts';
import { BOOTREPLY, type DhcpPacket, MessageType, Opt, decodePacket, encodePacket, interpretOptions, opt } from './packet.ts';

const MAC = '02:00:00:00:00:01';
const SERVER = '10.0.0.1';

class FakeClock implements Clock {
  t = 1_000_000;
  timers: Array<{ at: number; fn: () => void; id: number }> = [];
  #id = 0;
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.#id;
    this.timers.push({ at: this.t + ms, fn, id });
    return id;
  };
  clearTimeout = (h: unknown) => {
    this.timers = this.timers.filter((x) => x.id !== h);
  };
  /** Runs due timers in order until `ms` have passed. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = end;
  }
}

interface Sent {
  to: string;
  p: DhcpPacket;
  type: number;
  at: number;
}

class FakeTransport implements DhcpTransport {
  sent: Sent[] = [];
  onPacket: ((d: Buffer) => void) | undefined;
  closed = false;
  constructor(private readonly clock: FakeClock) {}
  start(cb: (d: Buffer) => void) {
    this.onPacket = cb;
  }
  send(data: Buffer, to: string) {
    const p = decodePacket(data);
    this.sent.push({ to, p, type: p.options.get(Opt.MESSAGE_TYPE)![0]!, at: this.clock.t });
  }
  close() {
    this.closed = true;
  }
  last(): Sent {
    return this.sent.at(-1)!;
  }
  /** The server's answer to the last packet sent. */
  reply(type: number, yiaddr = '10.0.0.50', extra: Array<[number, Buffer]> = [], mutate?: (b: Buffer) => void): void {
    const req = this.last().p;
    const base: Array<[number, Buffer]> = [
      opt.u8(Opt.MESSAGE_TYPE, type),
      opt.ip(Opt.SERVER_ID, SERVER),
      opt.ip(Opt.SUBNET_MASK, '255.255.255.0'),
      opt.ips(Opt.ROUTER, [SERVER]),
      opt.u32(Opt.LEASE_TIME, 3600),
    ];
    const options = [...base.filter(([c]) => !extra.some(([e]) => e === c)), ...extra];
    const b = encodePacket({ op: BOOTREPLY, xid: req.xid, chaddr: req.chaddr, yiaddr, options });
    mutate?.(b);
    this.onPacket!(b);
  }
}

describe('DhcpClient', () => {
  let clock: FakeClock;
  let net: FakeTransport;
  let events: DhcpEvent[];
  let client: DhcpClient;
  const types = () => net.sent.map((s) => s.type);
  const states = () => events.filter((e) => e.type === 'state').map((e) => (e as { state: string }).state);

  beforeEach(() => {
    clock = new FakeClock();
    net = new FakeTransport(clock);
    events = [];
    let seed = 1;
    client = new DhcpClient({
      mac: MAC,
      transport: net,
      clock,
      random: () => ((seed = (seed * 16807) % 2147483647) / 2147483647),
      jitterMs: 0,
      hostname: 'node-a',
      onEvent: (e) => events.push(e),
    });
  });

  function bind(): void {
    client.start();
    net.reply(MessageType.OFFER);
    net.reply(MessageType.ACK);
  }

  it('DISCOVER → OFFER → REQUEST → ACK, broadcast, with the options a server needs', () => {
    client.start();
    const d = net.last();
    expect(d).toMatchObject({ to: 'broadcast', type: MessageType.DISCOVER });
    expect(d.p.flags & 0x8000).toBe(0x8000);
    expect([...d.p.options.get(Opt.CLIENT_ID)!]).toEqual([1, 2, 0, 0, 0, 0, 1]);
    expect(d.p.options.get(Opt.HOSTNAME)!.toString()).toBe('node-a');
    expect([...d.p.options.get(Opt.PARAMETER_REQUEST)!]).toEqual(expect.arrayContaining([1, 3, 6, 12, 15, 26, 42, 51, 54, 58, 59]));
    net.reply(MessageType.OFFER);
    const r = net.last();
    expect(r).toMatchObject({ to: 'broadcast', type: MessageType.REQUEST });
    expect(r.p.xid).toBe(d.p.xid);
    expect(interpretOptions(r.p.options).serverId).toBe(SERVER);
    expect(r.p.options.get(Opt.REQUESTED_IP)!.join('.')).toBe('10.0.0.50');
    net.reply(MessageType.ACK);
    expect(client.state).toBe('bound');
    expect(client.lease).toMatchObject({ address: '10.0.0.50', prefixLength: 24, serverId: SERVER, leaseTime: 3600, renewalTime: 1800, rebindingTime: 3150, obtainedAt: clock.t });
    expect(states()).toEqual(['selecting', 'requesting', 'bound']);
    expect(events.find((e) => e.type === 'bound')).toMatchObject({ via: 'requesting' });
  });

  it('retransmits DISCOVER with exponential backoff up to 64 s', () => {
    client.start();
    clock.advance(4000 + 8000 + 16000 + 32000 + 64000 + 64000);
    const at = net.sent.map((s) => s.at - net.sent[0]!.at);
    expect(at).toEqual([0, 4000, 12000, 28000, 60000, 124000, 188000]);
    expect(new Set(net.sent.map((s) => s.p.xid)).size).toBe(1);
    expect(net.sent.at(-1)!.p.secs).toBe(188);
  });

  it('starts over when REQUESTs go unanswered, and after a NAK', () => {
    client.start();
    net.reply(MessageType.OFFER);
    clock.advance(4000 + 8000 + 16000 + 32000);
    expect(types()).toEqual([1, 3, 3, 3, 3, 1]);
    expect(client.state).toBe('selecting');
    net.reply(MessageType.OFFER);
    net.reply(MessageType.NAK, '0.0.0.0');
    expect(client.state).toBe('init');
    expect(events.some((e) => e.type === 'nak')).toBe(true);
    clock.advance(1000);
    expect(net.last().type).toBe(MessageType.DISCOVER);
  });

  it('ignores answers for another transaction or client, counts malformed packets', () => {
    client.start();
    net.reply(MessageType.OFFER, '10.0.0.50', [], (b) => b.writeUInt32BE(1234, 4));
    net.reply(MessageType.OFFER, '10.0.0.50', [], (b) => (b[28] = 0x99));
    expect(client.state).toBe('selecting');
    expect(client.counters.ignored).toBe(2);
    net.onPacket!(Buffer.from('nonsense'));
    net.onPacket!(Buffer.alloc(400));
    expect(client.counters.malformed).toBe(2);
    net.reply(MessageType.ACK); // an ACK while selecting
    expect(client.state).toBe('selecting');
    net.reply(MessageType.OFFER);
    expect(client.state).toBe('requesting');
  });

  it('renews at T1 by unicast, then goes back to BOUND with a new lease', () => {
    bind();
    clock.advance(1800_000 - 1);
    expect(client.state).toBe('bound');
    clock.advance(1);
    expect(client.state).toBe('renewing');
    const r = net.last();
    expect(r).toMatchObject({ to: SERVER, type: MessageType.REQUEST });
    expect(r.p.ciaddr).toBe('10.0.0.50');
    expect(r.p.flags & 0x8000).toBe(0);
    expect(r.p.options.has(Opt.SERVER_ID)).toBe(false);
    expect(r.p.options.has(Opt.REQUESTED_IP)).toBe(false);
    net.reply(MessageType.ACK);
    expect(client.state).toBe('bound');
    const renewed = events.filter((e) => e.type === 'bound').at(-1)!;
    expect(renewed).toMatchObject({ via: 'renewing', previous: { address: '10.0.0.50' }, lease: { obtainedAt: clock.t } });
  });

  it('retries in RENEWING at half the time left (≥ 60 s), rebinds by broadcast at T2, expires at the end', () => {
    bind();
    const t0 = clock.t;
    clock.advance(1800_000); // T1
    clock.advance(3150_000 - 1800_000 - 1); // just before T2
    const renewing = net.sent.filter((s) => s.to === SERVER).map((s) => (s.at - t0) / 1000);
    // T1, then half of the time left until T2 each time, never less than 60 s, stopping at T2.
    expect(renewing).toEqual([1800, 2475, 2812.5, 2981.25, 3065.625, 3125.625]);
    clock.advance(1);
    expect(client.state).toBe('rebinding');
    expect(net.last()).toMatchObject({ to: 'broadcast', type: MessageType.REQUEST });
    expect(net.last().p.ciaddr).toBe('10.0.0.50');
    expect(net.last().p.flags & 0x8000).toBe(0);
    clock.advance(3600_000 - 3150_000 - 1);
    expect(client.state).toBe('rebinding');
    expect(events.some((e) => e.type === 'expired')).toBe(false);
    clock.advance(1);
    expect(events.find((e) => e.type === 'expired')).toMatchObject({ reason: 'expired', lease: { address: '10.0.0.50' } });
    expect(client.lease).toBeUndefined();
    expect(client.state).toBe('selecting');
    expect(net.last().type).toBe(MessageType.DISCOVER);
  });

  it('accepts an ACK while rebinding, from any server', () => {
    bind();
    clock.advance(3150_000);
    expect(client.state).toBe('rebinding');
    net.reply(MessageType.ACK, '10.0.0.50', [opt.u32(Opt.LEASE_TIME, 600)]);
    expect(client.state).toBe('bound');
    expect(events.filter((e) => e.type === 'bound').at(-1)).toMatchObject({ via: 'rebinding', lease: { leaseTime: 600, renewalTime: 300 } });
  });

  it('drops the lease on a NAK while renewing', () => {
    bind();
    clock.advance(1800_000);
    net.reply(MessageType.NAK, '0.0.0.0');
    expect(events.find((e) => e.type === 'expired')).toMatchObject({ reason: 'nak' });
    expect(client.lease).toBeUndefined();
  });

  it('honours the server T1/T2 and falls back to defaults when they are inconsistent', () => {
    client.start();
    net.reply(MessageType.OFFER);
    net.reply(MessageType.ACK, '10.0.0.50', [opt.u32(Opt.RENEWAL_TIME, 100), opt.u32(Opt.REBINDING_TIME, 200)]);
    expect(client.lease).toMatchObject({ renewalTime: 100, rebindingTime: 200 });
    clock.advance(100_000);
    expect(client.state).toBe('renewing');
    net.reply(MessageType.ACK, '10.0.0.50', [opt.u32(Opt.RENEWAL_TIME, 5000), opt.u32(Opt.REBINDING_TIME, 200)]);
    expect(client.lease).toMatchObject({ renewalTime: 1800, rebindingTime: 3150 });
  });

  it('an infinite lease sets no timer', () => {
    client.start();
    net.reply(MessageType.OFFER);
    net.reply(MessageType.ACK, '10.0.0.50', [opt.u32(Opt.LEASE_TIME, 0xffffffff)]);
    expect(client.state).toBe('bound');
    expect(clock.timers).toHaveLength(0);
  });

  it('RELEASEs by unicast on stop and closes the transport', async () => {
    bind();
    await client.stop();
    expect(net.last()).toMatchObject({ to: SERVER, type: MessageType.RELEASE });
    expect(net.last().p.ciaddr).toBe('10.0.0.50');
    expect(interpretOptions(net.last().p.options).serverId).toBe(SERVER);
    expect(events.some((e) => e.type === 'released')).toBe(true);
    expect(client.state).toBe('stopped');
    expect(net.closed).toBe(true);
    expect(clock.timers).toHaveLength(0);
    const n = net.sent.length;
    await client.stop();
    expect(net.sent.length).toBe(n);
  });

  it('reports send failures and keeps retrying', () => {
    let fail = true;
    const send = net.send.bind(net);
    net.send = (d, to) => {
      if (fail) throw new Error('sendto: ENETUNREACH');
      send(d, to);
    };
    client.start();
    expect(client.counters.sendErrors).toBe(1);
    expect(events.find((e) => e.type === 'error')).toMatchObject({ error: { message: 'sendto: ENETUNREACH' } });
    fail = false;
    clock.advance(4000);
    expect(net.last().type).toBe(MessageType.DISCOVER);
  });
});
