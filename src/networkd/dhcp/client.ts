// The DHCPv4 client state machine of RFC 2131 (section 4.4), over an injected transport and
// clock so the same code runs against a real socket and against a scripted server in tests:
//
//   INIT ─DISCOVER→ SELECTING ─OFFER→ REQUESTING ─ACK→ BOUND ─T1→ RENEWING ─T2→ REBINDING
//                                          │NAK→INIT          (unicast)  │ACK→BOUND (broadcast)│ACK→BOUND
//                                                                  NAK / lease expiry → INIT
//
// Retransmission: DISCOVER and REQUEST back off exponentially (4 s, 8 s, ... 64 s, each ±1 s);
// in RENEWING and REBINDING the client retries after half the time left until T2 (resp. the
// lease's end), no sooner than minRetryMs (RFC: 60 s) and, when set, no later than
// maxRetryMs. On stop it RELEASEs the lease.
// Malformed packets and answers meant for another client are counted and dropped.
import {
  BOOTREPLY,
  type DhcpOptions,
  type DhcpPacket,
  MalformedPacketError,
  MessageType,
  Opt,
  decodePacket,
  encodePacket,
  interpretOptions,
  macBytes,
  opt,
} from './packet.ts';

export type DhcpState = 'init' | 'selecting' | 'requesting' | 'bound' | 'renewing' | 'rebinding' | 'stopped';

export interface Lease {
  address: string;
  prefixLength: number;
  serverId: string;
  /** Seconds, as granted. 0xffffffff is infinite. */
  leaseTime: number;
  renewalTime: number;
  rebindingTime: number;
  /** Clock time (ms) the request that obtained it was sent: the lease's times count from here. */
  obtainedAt: number;
  options: DhcpOptions;
}

export const INFINITE_LEASE = 0xffffffff;

export type DhcpEvent =
  | { type: 'state'; state: DhcpState; previous: DhcpState }
  /** A lease was obtained or extended; `previous` is the lease it replaces (same address or not). */
  | { type: 'bound'; lease: Lease; previous?: Lease; via: 'requesting' | 'renewing' | 'rebinding' }
  /** The lease ended without renewal (expiry or NAK): stop using the address. */
  | { type: 'expired'; lease: Lease; reason: 'expired' | 'nak' }
  | { type: 'released'; lease: Lease }
  | { type: 'nak'; serverId?: string; message?: string }
  | { type: 'error'; error: Error };

export interface DhcpTransport {
  /** Starts delivering received datagrams (port 68 of this link) to onPacket. */
  start(onPacket: (data: Buffer) => void): void;
  /** To 255.255.255.255:67 ('broadcast') or to a server's address, port 67. */
  send(data: Buffer, to: 'broadcast' | string): void | Promise<void>;
  close(): void;
}

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (h) => globalThis.clearTimeout(h as ReturnType<typeof setTimeout>),
};

export interface DhcpClientOptions {
  /** The link's hardware address, aa:bb:cc:dd:ee:ff. */
  mac: string;
  transport: DhcpTransport;
  onEvent?: (ev: DhcpEvent) => void;
  clock?: Clock;
  /** In [0, 1): transaction ids and jitter. */
  random?: () => number;
  /** Sent as option 12 (some servers register it in DNS). */
  hostname?: string;
  /** Option 61; default: type 1 (Ethernet) and the MAC. */
  clientId?: Buffer;
  /** Option 60. */
  vendorClass?: string;
  /** An address to ask for again (option 50 in DISCOVER), e.g. from before a restart. */
  requestedAddress?: string;
  /** First DISCOVER/REQUEST retransmission wait (RFC 2131: 4 s), doubling up to maxTimeoutMs (64 s). */
  initialTimeoutMs?: number;
  maxTimeoutMs?: number;
  /** ± jitter on those waits (RFC: 1 s). */
  jitterMs?: number;
  /** REQUESTs sent in REQUESTING before starting over with DISCOVER. */
  requestAttempts?: number;
  /** Shortest wait between retransmissions in RENEWING/REBINDING (RFC: 60 s). */
  minRetryMs?: number;
  /** Longest such wait (default: none, half the time left as the RFC says). */
  maxRetryMs?: number;
  /** Time to wait after a NAK before DISCOVER again. */
  nakBackoffMs?: number;
}

export interface DhcpCounters {
  sent: number;
  received: number;
  /** Undecodable packets. */
  malformed: number;
  /** Well-formed packets that were not for us or not expected now. */
  ignored: number;
  naks: number;
  sendErrors: number;
}

const MAX_TIMER = 2 ** 31 - 1;
const PARAMETER_REQUEST_LIST = [
  Opt.SUBNET_MASK,
  Opt.ROUTER,
  Opt.DNS,
  Opt.HOSTNAME,
  Opt.DOMAIN_NAME,
  Opt.MTU,
  Opt.BROADCAST,
  Opt.NTP,
  Opt.LEASE_TIME,
  Opt.SERVER_ID,
  Opt.RENEWAL_TIME,
  Opt.REBINDING_TIME,
  Opt.DOMAIN_SEARCH,
  Opt.CLASSLESS_ROUTES,
];

export class DhcpClient {
  readonly counters: DhcpCounters = { sent: 0, received: 0, malformed: 0, ignored: 0, naks: 0, sendErrors: 0 };
  #state: DhcpState = 'init';
  #lease: Lease | undefined;
  #xid = 0;
  #timer: unknown;
  #attempt = 0;
  /** When the current exchange started (secs field) and when its last request went out. */
  #exchangeStart = 0;
  #lastSent = 0;
  #offer: { address: string; serverId: string } | undefined;
  readonly #o: Required<Pick<DhcpClientOptions, 'initialTimeoutMs' | 'maxTimeoutMs' | 'jitterMs' | 'requestAttempts' | 'minRetryMs' | 'maxRetryMs' | 'nakBackoffMs'>>;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #clientId: Buffer;

  constructor(private readonly opts: DhcpClientOptions) {
    macBytes(opts.mac); // validates
    this.#clock = opts.clock ?? systemClock;
    this.#random = opts.random ?? Math.random;
    this.#clientId = opts.clientId ?? Buffer.concat([Buffer.from([1]), macBytes(opts.mac)]);
    this.#o = {
      initialTimeoutMs: opts.initialTimeoutMs ?? 4000,
      maxTimeoutMs: opts.maxTimeoutMs ?? 64_000,
      jitterMs: opts.jitterMs ?? 1000,
      requestAttempts: opts.requestAttempts ?? 4,
      minRetryMs: opts.minRetryMs ?? 60_000,
      maxRetryMs: opts.maxRetryMs ?? Infinity,
      nakBackoffMs: opts.nakBackoffMs ?? 1000,
    };
  }

  get state(): DhcpState {
    return this.#state;
  }

  get lease(): Lease | undefined {
    return this.#lease;
  }

  start(): void {
    if (this.#state === 'stopped') throw new Error('DHCP client: start after stop');
    this.opts.transport.start((data) => this.#receive(data));
    this.#discover();
  }

  /** Stops, releasing the lease first unless release is false. */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#clearTimer();
    const lease = this.#lease;
    if (lease && (opts.release ?? true) && ['bound', 'renewing', 'rebinding'].includes(this.#state)) {
      this.#xid = this.#newXid();
      await this.#send(
        {
          ciaddr: lease.address,
          options: [opt.u8(Opt.MESSAGE_TYPE, MessageType.RELEASE), opt.ip(Opt.SERVER_ID, lease.serverId), [Opt.CLIENT_ID, this.#clientId]],
        },
        lease.serverId,
      );
      this.#lease = undefined;
      this.#emit({ type: 'released', lease });
    }
    this.#setState('stopped');
    this.opts.transport.close();
  }

  // --- sending ----------------------------------------------------------------------------

  #newXid(): number {
    return Math.floor(this.#random() * 0x100000000) >>> 0;
  }

  #commonOptions(): Array<[number, Buffer]> {
    const o: Array<[number, Buffer]> = [
      [Opt.CLIENT_ID, this.#clientId],
      opt.u16(Opt.MAX_MESSAGE_SIZE, 1500),
      opt.bytes(Opt.PARAMETER_REQUEST, PARAMETER_REQUEST_LIST),
    ];
    if (this.opts.hostname) o.push(opt.str(Opt.HOSTNAME, this.opts.hostname));
    if (this.opts.vendorClass) o.push(opt.str(Opt.VENDOR_CLASS, this.opts.vendorClass));
    return o;
  }

  async #send(p: { ciaddr?: string; options: Array<[number, Buffer]> }, to: 'broadcast' | string): Promise<void> {
    const now = this.#clock.now();
    this.#lastSent = now;
    const secs = Math.min(0xffff, Math.floor((now - this.#exchangeStart) / 1000));
    const data = encodePacket({
      xid: this.#xid,
      secs,
      // Until the link has the address, answers must be broadcast: the kernel drops unicast
      // IP to an address it does not have.
      broadcast: !p.ciaddr,
      ciaddr: p.ciaddr,
      chaddr: this.opts.mac,
      options: p.options,
    });
    try {
      await this.opts.transport.send(data, to);
      this.counters.sent++;
    } catch (err) {
      this.counters.sendErrors++;
      this.#emit({ type: 'error', error: err as Error });
    }
  }

  #sendDiscover(): void {
    const options: Array<[number, Buffer]> = [opt.u8(Opt.MESSAGE_TYPE, MessageType.DISCOVER), ...this.#commonOptions()];
    if (this.opts.requestedAddress) options.push(opt.ip(Opt.REQUESTED_IP, this.opts.requestedAddress));
    void this.#send({ options }, 'broadcast');
  }

  #sendSelectingRequest(): void {
    const offer = this.#offer!;
    void this.#send(
      {
        options: [
          opt.u8(Opt.MESSAGE_TYPE, MessageType.REQUEST),
          opt.ip(Opt.REQUESTED_IP, offer.address),
          opt.ip(Opt.SERVER_ID, offer.serverId),
          ...this.#commonOptions(),
        ],
      },
      'broadcast',
    );
  }

  #sendLeaseRequest(to: 'broadcast' | string): void {
    const lease = this.#lease!;
    void this.#send({ ciaddr: lease.address, options: [opt.u8(Opt.MESSAGE_TYPE, MessageType.REQUEST), ...this.#commonOptions()] }, to);
  }

  // --- states -----------------------------------------------------------------------------

  #backoff(attempt: number): number {
    const base = Math.min(this.#o.initialTimeoutMs * 2 ** attempt, this.#o.maxTimeoutMs);
    return Math.max(0, base + (this.#random() * 2 - 1) * this.#o.jitterMs);
  }

  #discover(): void {
    this.#offer = undefined;
    this.#setState('selecting');
    this.#xid = this.#newXid();
    this.#attempt = 0;
    this.#exchangeStart = this.#clock.now();
    const tick = () => {
      this.#sendDiscover();
      this.#arm(this.#clock.now() + this.#backoff(this.#attempt++), tick);
    };
    tick();
  }

  #requesting(offer: { address: string; serverId: string }): void {
    this.#offer = offer;
    this.#setState('requesting');
    this.#attempt = 0;
    const tick = () => {
      if (this.#attempt >= this.#o.requestAttempts) return this.#discover();
      this.#sendSelectingRequest();
      this.#arm(this.#clock.now() + this.#backoff(this.#attempt++), tick);
    };
    tick();
  }

  #leaseTimes(l: Lease): { t1: number; t2: number; end: number } {
    const at = (s: number) => (s >= INFINITE_LEASE ? Infinity : l.obtainedAt + s * 1000);
    return { t1: at(l.renewalTime), t2: at(l.rebindingTime), end: at(l.leaseTime) };
  }

  #bound(lease: Lease, via: 'requesting' | 'renewing' | 'rebinding'): void {
    const previous = this.#lease;
    this.#lease = lease;
    this.#offer = undefined;
    this.#setState('bound');
    this.#emit(previous ? { type: 'bound', lease, previous, via } : { type: 'bound', lease, via });
    const { t1 } = this.#leaseTimes(lease);
    this.#arm(t1, () => this.#renewing());
  }

  #renewing(): void {
    this.#setState('renewing');
    this.#xid = this.#newXid();
    this.#exchangeStart = this.#clock.now();
    this.#retryUntil('renewing');
  }

  #rebinding(): void {
    this.#setState('rebinding');
    this.#xid = this.#newXid();
    this.#retryUntil('rebinding');
  }

  /** Sends now, then again after half the time left (≥ minRetryMs), until the deadline. */
  #retryUntil(state: 'renewing' | 'rebinding'): void {
    const lease = this.#lease!;
    const times = this.#leaseTimes(lease);
    const deadline = state === 'renewing' ? times.t2 : times.end;
    const onDeadline = () => (state === 'renewing' ? this.#rebinding() : this.#expire('expired'));
    const tick = () => {
      const now = this.#clock.now();
      if (now >= deadline) return onDeadline();
      this.#sendLeaseRequest(state === 'renewing' ? lease.serverId : 'broadcast');
      const wait = Math.min(this.#o.maxRetryMs, Math.max(this.#o.minRetryMs, (deadline - now) / 2));
      const next = Math.min(deadline, now + wait);
      this.#arm(next, () => (this.#clock.now() >= deadline ? onDeadline() : tick()));
    };
    tick();
  }

  #expire(reason: 'expired' | 'nak'): void {
    const lease = this.#lease;
    this.#lease = undefined;
    if (lease) this.#emit({ type: 'expired', lease, reason });
    if (reason === 'nak') {
      this.#setState('init');
      this.#arm(this.#clock.now() + this.#o.nakBackoffMs, () => this.#discover());
    } else {
      this.#discover();
    }
  }

  // --- receiving --------------------------------------------------------------------------

  #receive(data: Buffer): void {
    if (this.#state === 'stopped') return;
    this.counters.received++;
    let p: DhcpPacket;
    let o: DhcpOptions;
    try {
      p = decodePacket(data);
      o = interpretOptions(p.options);
    } catch (err) {
      if (!(err instanceof MalformedPacketError)) this.#emit({ type: 'error', error: err as Error });
      this.counters.malformed++;
      return;
    }
    if (p.op !== BOOTREPLY || p.xid !== this.#xid || p.chaddr !== this.opts.mac.toLowerCase() || o.messageType === undefined) {
      this.counters.ignored++;
      return;
    }
    switch (this.#state) {
      case 'selecting':
        if (o.messageType === MessageType.OFFER && p.yiaddr !== '0.0.0.0' && o.serverId) {
          return this.#requesting({ address: p.yiaddr, serverId: o.serverId });
        }
        break;
      case 'requesting':
        if (o.messageType === MessageType.NAK && (!o.serverId || o.serverId === this.#offer?.serverId)) return this.#nak(o);
        if (o.messageType === MessageType.ACK && p.yiaddr !== '0.0.0.0' && (!o.serverId || o.serverId === this.#offer?.serverId)) {
          return this.#bound(this.#leaseFrom(p, o, this.#offer!.serverId), 'requesting');
        }
        break;
      case 'renewing':
      case 'rebinding':
        if (o.messageType === MessageType.NAK) return this.#nak(o);
        if (o.messageType === MessageType.ACK && p.yiaddr !== '0.0.0.0') {
          return this.#bound(this.#leaseFrom(p, o, o.serverId ?? this.#lease!.serverId), this.#state);
        }
        break;
    }
    this.counters.ignored++;
  }

  #nak(o: DhcpOptions): void {
    this.counters.naks++;
    this.#clearTimer();
    this.#emit({ type: 'nak', ...(o.serverId ? { serverId: o.serverId } : {}), ...(o.message ? { message: o.message } : {}) });
    this.#expire('nak');
  }

  #leaseFrom(p: DhcpPacket, o: DhcpOptions, serverId: string): Lease {
    const leaseTime = o.leaseTime ?? INFINITE_LEASE;
    let t1 = o.renewalTime ?? Math.floor(leaseTime * 0.5);
    let t2 = o.rebindingTime ?? Math.floor(leaseTime * 0.875);
    if (leaseTime === INFINITE_LEASE) {
      t1 = o.renewalTime ?? INFINITE_LEASE;
      t2 = o.rebindingTime ?? INFINITE_LEASE;
    }
    if (t2 > leaseTime || t1 > t2) {
      // Inconsistent times from the server: fall back to the RFC defaults.
      t1 = Math.floor(leaseTime * 0.5);
      t2 = Math.floor(leaseTime * 0.875);
    }
    return {
      address: p.yiaddr,
      prefixLength: o.prefixLength ?? classfulPrefix(p.yiaddr),
      serverId,
      leaseTime,
      renewalTime: t1,
      rebindingTime: t2,
      obtainedAt: this.#lastSent,
      options: o,
    };
  }

  // --- plumbing ---------------------------------------------------------------------------

  #setState(s: DhcpState): void {
    if (s === this.#state) return;
    const previous = this.#state;
    this.#state = s;
    this.#emit({ type: 'state', state: s, previous });
  }

  #emit(ev: DhcpEvent): void {
    try {
      this.opts.onEvent?.(ev);
    } catch {
      // A listener's failure is its own; the state machine goes on.
    }
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Runs fn at clock time `when` (Infinity: never), in steps the timer API can take. */
  #arm(when: number, fn: () => void): void {
    this.#clearTimer();
    if (when === Infinity) return;
    const step = () => {
      const left = when - this.#clock.now();
      if (left > MAX_TIMER) {
        this.#timer = this.#clock.setTimeout(step, MAX_TIMER);
        return;
      }
      this.#timer = this.#clock.setTimeout(() => {
        this.#timer = undefined;
        fn();
      }, Math.max(0, left));
    };
    step();
  }
}

/** The prefix length an address's class implies, for servers that send no subnet mask. */
export function classfulPrefix(addr: string): number {
  const first = Number(addr.split('.')[0]);
  if (first < 128) return 8;
  if (first < 192) return 16;
  return 24;
}
