// Fuzzing the parsers that read what the network and the kernel send: random, truncated and
// mutated DHCP packets and netlink datagrams (seeded, so a failure reproduces). A parser may
// only answer or throw its Malformed*Error; the DHCP client must count and drop, never throw.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type Clock, DhcpClient, type DhcpTransport } from './dhcp/client.ts';
import { BOOTREPLY, MalformedPacketError, MessageType, Opt, decodePacket, encodeClasslessRoutes, encodeDomainSearch, encodePacket, interpretOptions, opt } from './dhcp/packet.ts';
import { prng } from '../../test/lib/prng.ts';
import {
  IFLA,
  IFLA_INFO,
  IFLA_VLAN,
  MalformedMessageError,
  NLMSG,
  RTM,
  addressBody,
  attr,
  decodeAddress,
  decodeError,
  decodeEvent,
  decodeLink,
  decodeRoute,
  encodeAttrs,
  encodeMessage,
  ifinfomsg,
  routeBody,
  splitMessages,
} from './netlink.ts';

const ROUNDS = 12_000;
const NL_ROUNDS = 20_000;


function hexFixture(name: string): Buffer[] {
  return fs
    .readFileSync(`test/fixtures/networkd/${name}`, 'utf8')
    .trim()
    .split('\n')
    .map((l) => Buffer.from(l, 'hex'));
}

/** Random bytes, a truncated sample, or a sample with a few bytes changed. */
function variant(rand: () => number, corpus: Buffer[], headerLen: number): Buffer {
  const int = (n: number) => Math.floor(rand() * n);
  const pick = corpus[int(corpus.length)]!;
  switch (int(4)) {
    case 0: {
      const b = Buffer.alloc(int(700));
      for (let i = 0; i < b.length; i++) b[i] = int(256);
      return b;
    }
    case 1:
      return Buffer.from(pick.subarray(0, int(pick.length + 1)));
    case 2: {
      const b = Buffer.from(pick);
      const n = 1 + int(8);
      // Mostly past the fixed header, where lengths live.
      for (let i = 0; i < n && b.length > 0; i++) b[rand() < 0.8 && b.length > headerLen ? headerLen + int(b.length - headerLen) : int(b.length)] = int(256);
      return b;
    }
    default: {
      // A sample followed or preceded by junk, or two samples glued together.
      const junk = Buffer.alloc(int(64));
      for (let i = 0; i < junk.length; i++) junk[i] = int(256);
      const other = corpus[int(corpus.length)]!;
      return rand() < 0.5 ? Buffer.concat([pick, junk]) : Buffer.concat([pick.subarray(0, int(pick.length)), other]);
    }
  }
}

describe('fuzzing', () => {
  it(`DHCP: ${ROUNDS} random, truncated and mutated packets never crash the parser or the client`, () => {
    const rand = prng(0xb12e);
    const mac = '02:42:ac:63:00:02';
    const corpus = [
      ...hexFixture('dnsmasq-offer.hex'),
      ...hexFixture('dnsmasq-ack.hex'),
      encodePacket({ op: BOOTREPLY, xid: 7, chaddr: mac, yiaddr: '10.0.0.9', options: [opt.u8(Opt.MESSAGE_TYPE, MessageType.ACK), opt.u8(Opt.OVERLOAD, 3), [Opt.DOMAIN_SEARCH, encodeDomainSearch(['a.example', 'b.example'])]] }),
      encodePacket({ op: BOOTREPLY, xid: 7, chaddr: mac, options: [[Opt.CLASSLESS_ROUTES, encodeClasslessRoutes([{ destination: '10.0.0.0/8', router: '10.0.0.1' }])], [250, Buffer.alloc(400, 1)]] }),
    ];
    // A client in SELECTING whose transaction id the mutated replies carry, so they reach the state machine.
    let deliver: (d: Buffer) => void = () => {};
    let xid = 0;
    const transport: DhcpTransport = {
      start: (cb) => (deliver = cb),
      send: (d) => {
        xid = d.readUInt32BE(4);
      },
      close: () => {},
    };
    const clock: Clock = { now: () => 0, setTimeout: () => 0, clearTimeout: () => {} };
    const client = new DhcpClient({ mac, transport, clock, onEvent: () => {} });
    client.start();
    const t0 = Date.now();
    let malformed = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const b = variant(rand, corpus, 240);
      try {
        interpretOptions(decodePacket(b).options);
      } catch (err) {
        if (!(err instanceof MalformedPacketError)) throw new Error(`round ${i}: ${String(err)} on ${b.toString('hex')}`);
        malformed++;
      }
      if (b.length >= 8) b.writeUInt32BE(xid, 4);
      expect(() => deliver(b)).not.toThrow();
    }
    expect(malformed).toBeGreaterThan(ROUNDS / 4);
    expect(client.counters.received).toBe(ROUNDS);
    expect(client.counters.malformed).toBeGreaterThan(0);
    expect(Date.now() - t0).toBeLessThan(15_000);
  }, 30_000);

  it(`netlink: ${NL_ROUNDS} random, truncated and mutated datagrams never crash the decoders`, () => {
    const rand = prng(0x7e7);
    const msg = (type: number, body: Buffer) => encodeMessage({ type, flags: 0, seq: 1, pid: 0 }, body);
    const corpus = [
      ...hexFixture('rtm-getlink-dump.hex'),
      ...hexFixture('rtm-getaddr-dump.hex'),
      ...hexFixture('rtm-getroute-dump.hex'),
      msg(RTM.NEWLINK, Buffer.concat([ifinfomsg(0, 5), encodeAttrs([attr.str(IFLA.IFNAME, 'eth0.5'), attr.nested(IFLA.LINKINFO, [attr.str(IFLA_INFO.KIND, 'vlan'), attr.nested(IFLA_INFO.DATA, [attr.u16(IFLA_VLAN.ID, 5)])])])])),
      msg(RTM.NEWADDR, addressBody({ index: 2, address: '10.0.0.2/24', validLifetime: 60 })),
      msg(RTM.NEWROUTE, routeBody({ dst: '::/0', gateway: 'fe80::1', oif: 2, mtu: 1280 })),
      msg(NLMSG.ERROR, Buffer.concat([Buffer.from([0xef, 0xff, 0xff, 0xff]), Buffer.alloc(16), encodeAttrs([attr.str(1, 'no')])])),
    ];
    const t0 = Date.now();
    let messages = 0;
    let rejected = 0;
    const only = (fn: () => unknown, i: number, b: Buffer) => {
      try {
        fn();
      } catch (err) {
        if (!(err instanceof MalformedMessageError)) throw new Error(`round ${i}: ${String(err)} on ${b.toString('hex')}`);
        rejected++;
      }
    };
    for (let i = 0; i < NL_ROUNDS; i++) {
      const b = variant(rand, corpus, 32);
      let msgs: ReturnType<typeof splitMessages> = [];
      only(() => (msgs = splitMessages(b)), i, b);
      for (const m of msgs) {
        messages++;
        only(() => decodeEvent(m), i, b);
        // Every decoder on every message, whatever its type says.
        only(() => decodeLink(m), i, b);
        only(() => decodeAddress(m), i, b);
        only(() => decodeRoute(m), i, b);
        only(() => decodeError(m), i, b);
      }
    }
    expect(messages).toBeGreaterThan(10_000);
    expect(rejected).toBeGreaterThan(NL_ROUNDS / 4);
    expect(Date.now() - t0).toBeLessThan(15_000);
  }, 30_000);
});
