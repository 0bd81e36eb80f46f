// rtnetlink over a NETLINK_ROUTE socket opened through koffi (src/lib/socket.ts): requests (one at a
// time per socket, matched by sequence number) and a multicast subscription delivering link,
// address and route changes. The wire format is netlink.ts.
import { initNative } from '../lib/native.ts';
import { SyscallError } from '../lib/sys.ts';
import type { Family } from '../lib/ip.ts';
import {
  AF_UNSPEC,
  type Address,
  type AddressRequest,
  IFF,
  IFLA,
  IFLA_INFO,
  IFLA_VLAN,
  type Link,
  MalformedMessageError,
  NETLINK_CAP_ACK,
  NETLINK_EXT_ACK,
  NETLINK_ROUTE,
  NLM_F,
  NLMSG,
  type NlMessage,
  type Route,
  type RouteRequest,
  RTM,
  RTMGRP,
  RT_TABLE,
  type RtnlEvent,
  SOL_NETLINK,
  type Attr,
  addressBody,
  afOf,
  attr,
  decodeAddress,
  decodeError,
  decodeEvent,
  decodeLink,
  decodeRoute,
  encodeAttrs,
  encodeMessage,
  errnoName,
  ifinfomsg,
  routeBody,
  splitMessages,
} from './netlink.ts';
import { AF_NETLINK, RawSocket, SOCK_RAW, SOL_SOCKET, SO_RCVBUF, SO_RCVBUFFORCE, type Poller, sockaddrNl } from '../lib/socket.ts';

/** An NLMSG_ERROR answer: the operation, the errno's name and the kernel's own words. */
export class NetlinkError extends Error {
  override name = 'NetlinkError';
  readonly code: string;
  constructor(
    readonly operation: string,
    readonly errno: number,
    readonly kernelMessage?: string,
  ) {
    const code = errnoName(errno);
    super(`${operation}: ${code}${kernelMessage ? ` (${kernelMessage})` : ''}`);
    this.code = code;
  }
}

export type LinkRef = string | number;

export interface LinkSpec {
  name: string;
  kind: string;
  /** Lower link (IFLA_LINK) by name or index. */
  parent?: LinkRef;
  mtu?: number;
  mac?: string;
  /** IFLA_INFO_DATA attributes. */
  data?: Attr[];
}

export interface RtnlCounters {
  /** Messages that failed to decode and were dropped. */
  malformed: number;
  /** Answers that belonged to no request in flight (stale sequence numbers). */
  stray: number;
}

const RECV_BUF = 64 * 1024;

export class Rtnl {
  #seq = Math.floor(Math.random() * 0x7fffffff);
  #queue: Promise<unknown> = Promise.resolve();
  readonly #buf = Buffer.alloc(RECV_BUF);
  readonly counters: RtnlCounters = { malformed: 0, stray: 0 };

  private constructor(private readonly sock: RawSocket) {}

  static async open(opts: { poller?: Poller } = {}): Promise<Rtnl> {
    await initNative();
    const sock = RawSocket.open(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE, 'rtnetlink', opts.poller);
    try {
      // Extended acks (the kernel's reason in words) and capped acks are nice to have: older
      // kernels without them still work.
      for (const [opt, name] of [
        [NETLINK_EXT_ACK, 'NETLINK_EXT_ACK'],
        [NETLINK_CAP_ACK, 'NETLINK_CAP_ACK'],
      ] as const) {
        try {
          sock.setsockoptInt(SOL_NETLINK, opt, 1, `setsockopt(${name})`);
        } catch {
          /* not supported */
        }
      }
      sock.bind(sockaddrNl(0));
    } catch (err) {
      sock.close();
      throw err;
    }
    return new Rtnl(sock);
  }

  close(): void {
    this.sock.close();
  }

  // --- links ------------------------------------------------------------------------------

  async listLinks(): Promise<Link[]> {
    const msgs = await this.#dump('list links', RTM.GETLINK, ifinfomsg(AF_UNSPEC, 0));
    return this.#decodeAll(msgs, RTM.NEWLINK, decodeLink);
  }

  async getLink(ref: LinkRef): Promise<Link> {
    const body =
      typeof ref === 'number'
        ? ifinfomsg(AF_UNSPEC, ref)
        : Buffer.concat([ifinfomsg(AF_UNSPEC, 0), encodeAttrs([attr.str(IFLA.IFNAME, ref)])]);
    const msgs = await this.#request(`get link ${ref}`, RTM.GETLINK, 0, body);
    const m = msgs.find((x) => x.type === RTM.NEWLINK);
    if (!m) throw new NetlinkError(`get link ${ref}`, 19 /* ENODEV */);
    return decodeLink(m);
  }

  async linkIndex(ref: LinkRef): Promise<number> {
    return typeof ref === 'number' ? ref : (await this.getLink(ref)).index;
  }

  async setLinkUp(ref: LinkRef, up = true): Promise<void> {
    const index = await this.linkIndex(ref);
    await this.#request(`set link ${ref} ${up ? 'up' : 'down'}`, RTM.NEWLINK, NLM_F.ACK, ifinfomsg(AF_UNSPEC, index, up ? IFF.UP : 0, IFF.UP));
  }

  async setMtu(ref: LinkRef, mtu: number): Promise<void> {
    const index = await this.linkIndex(ref);
    const body = Buffer.concat([ifinfomsg(AF_UNSPEC, index), encodeAttrs([attr.u32(IFLA.MTU, mtu)])]);
    await this.#request(`set link ${ref} mtu ${mtu}`, RTM.NEWLINK, NLM_F.ACK, body);
  }

  /** Creates a link of any kind (IFLA_LINKINFO/IFLA_INFO_KIND); fails with EEXIST when it exists. */
  async createLink(spec: LinkSpec): Promise<void> {
    const attrs: Attr[] = [attr.str(IFLA.IFNAME, spec.name)];
    if (spec.parent !== undefined) attrs.push(attr.u32(IFLA.LINK, await this.linkIndex(spec.parent)));
    if (spec.mtu) attrs.push(attr.u32(IFLA.MTU, spec.mtu));
    if (spec.mac) attrs.push(attr.bytes(IFLA.ADDRESS, Buffer.from(spec.mac.split(':').map((x) => parseInt(x, 16)))));
    const info: Attr[] = [attr.str(IFLA_INFO.KIND, spec.kind)];
    if (spec.data) info.push(attr.nested(IFLA_INFO.DATA, spec.data));
    attrs.push(attr.nested(IFLA.LINKINFO, info));
    const body = Buffer.concat([ifinfomsg(AF_UNSPEC, 0), encodeAttrs(attrs)]);
    await this.#request(`create ${spec.kind} link ${spec.name}`, RTM.NEWLINK, NLM_F.ACK | NLM_F.CREATE | NLM_F.EXCL, body);
  }

  /** An 802.1Q VLAN on parent. */
  async createVlan(v: { name: string; parent: LinkRef; id: number; mtu?: number }): Promise<void> {
    if (!Number.isInteger(v.id) || v.id < 1 || v.id > 4094) throw new Error(`create vlan ${v.name}: id ${v.id} is not in 1..4094`);
    await this.createLink({ name: v.name, kind: 'vlan', parent: v.parent, mtu: v.mtu, data: [attr.u16(IFLA_VLAN.ID, v.id)] });
  }

  /** Changes the kind-specific settings (IFLA_INFO_DATA) of an existing link, e.g. a bond's mode. */
  async changeLinkInfo(ref: LinkRef, kind: string, data: Attr[]): Promise<void> {
    const index = await this.linkIndex(ref);
    const info = attr.nested(IFLA.LINKINFO, [attr.str(IFLA_INFO.KIND, kind), attr.nested(IFLA_INFO.DATA, data)]);
    const body = Buffer.concat([ifinfomsg(AF_UNSPEC, index), encodeAttrs([info])]);
    await this.#request(`change ${kind} link ${ref}`, RTM.NEWLINK, NLM_F.ACK, body);
  }

  /** Makes `ref` a member of the bond or bridge `master` (0: of none). */
  async setMaster(ref: LinkRef, master: number): Promise<void> {
    const index = await this.linkIndex(ref);
    const body = Buffer.concat([ifinfomsg(AF_UNSPEC, index), encodeAttrs([attr.u32(IFLA.MASTER, master)])]);
    await this.#request(`set link ${ref} master ${master}`, RTM.NEWLINK, NLM_F.ACK, body);
  }

  async deleteLink(ref: LinkRef): Promise<void> {
    const index = await this.linkIndex(ref);
    await this.#request(`delete link ${ref}`, RTM.DELLINK, NLM_F.ACK, ifinfomsg(AF_UNSPEC, index));
  }

  // --- addresses --------------------------------------------------------------------------

  async listAddresses(family?: Family): Promise<Address[]> {
    const af = family ? afOf(family) : AF_UNSPEC;
    const msgs = await this.#dump('list addresses', RTM.GETADDR, Buffer.from([af, 0, 0, 0, 0, 0, 0, 0]));
    return this.#decodeAll(msgs, RTM.NEWADDR, decodeAddress);
  }

  /** Adds an address; with replace, updates it in place (lifetimes) or adds it. */
  async addAddress(link: LinkRef, a: Omit<AddressRequest, 'index'> & { replace?: boolean }): Promise<void> {
    const index = await this.linkIndex(link);
    const flags = NLM_F.ACK | NLM_F.CREATE | (a.replace ? NLM_F.REPLACE : NLM_F.EXCL);
    await this.#request(`add address ${a.address} to ${link}`, RTM.NEWADDR, flags, addressBody({ ...a, index }));
  }

  async deleteAddress(link: LinkRef, address: string): Promise<void> {
    const index = await this.linkIndex(link);
    await this.#request(`delete address ${address} from ${link}`, RTM.DELADDR, NLM_F.ACK, addressBody({ index, address }, true));
  }

  // --- routes -----------------------------------------------------------------------------

  /** Routes of one table (default main; pass 0 for every table). */
  async listRoutes(opts: { family?: Family; table?: number } = {}): Promise<Route[]> {
    const af = opts.family ? afOf(opts.family) : AF_UNSPEC;
    const table = opts.table ?? RT_TABLE.MAIN;
    const head = Buffer.alloc(12);
    head.writeUInt8(af, 0);
    const msgs = await this.#dump('list routes', RTM.GETROUTE, head);
    const routes = this.#decodeAll(msgs, RTM.NEWROUTE, decodeRoute);
    return table === 0 ? routes : routes.filter((r) => r.table === table);
  }

  async addRoute(r: Omit<RouteRequest, 'oif'> & { link?: LinkRef; replace?: boolean }): Promise<void> {
    const oif = r.link === undefined ? undefined : await this.linkIndex(r.link);
    const flags = NLM_F.ACK | NLM_F.CREATE | (r.replace ? NLM_F.REPLACE : NLM_F.EXCL);
    await this.#request(`add route ${describeRoute(r)}`, RTM.NEWROUTE, flags, routeBody({ ...r, oif }));
  }

  async deleteRoute(r: Omit<RouteRequest, 'oif'> & { link?: LinkRef }): Promise<void> {
    const oif = r.link === undefined ? undefined : await this.linkIndex(r.link);
    // Deleting matches on what is given; protocol and scope are wildcards unless named.
    await this.#request(`delete route ${describeRoute(r)}`, RTM.DELROUTE, NLM_F.ACK, routeBody({ ...r, oif, protocol: r.protocol ?? 0, scope: r.scope ?? 255 }));
  }

  // --- plumbing ---------------------------------------------------------------------------

  #decodeAll<T>(msgs: NlMessage[], type: number, decode: (m: NlMessage) => T): T[] {
    const out: T[] = [];
    for (const m of msgs) {
      if (m.type !== type) continue;
      try {
        out.push(decode(m));
      } catch (err) {
        if (!(err instanceof MalformedMessageError)) throw err;
        this.counters.malformed++;
      }
    }
    return out;
  }

  async #dump(operation: string, type: number, body: Buffer): Promise<NlMessage[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#request(operation, type, NLM_F.DUMP, body);
      } catch (err) {
        // The table changed under the dump (NLM_F_DUMP_INTR): dump again.
        if (err instanceof DumpInterrupted && attempt < 5) continue;
        throw err;
      }
    }
  }

  /** One request; serialized with every other request on this socket. */
  #request(operation: string, type: number, flags: number, body: Buffer): Promise<NlMessage[]> {
    const run = () => this.#exchange(operation, type, flags, body);
    const p = this.#queue.then(run, run);
    this.#queue = p.catch(() => {});
    return p;
  }

  async #exchange(operation: string, type: number, flags: number, body: Buffer): Promise<NlMessage[]> {
    const seq = (this.#seq = (this.#seq + 1) >>> 0);
    const dump = (flags & NLM_F.DUMP) === NLM_F.DUMP;
    this.sock.sendto(encodeMessage({ type, flags: flags | NLM_F.REQUEST, seq, pid: 0 }, body), sockaddrNl(0));
    const out: NlMessage[] = [];
    let interrupted = false;
    for (;;) {
      const { data } = await this.sock.recv(this.#buf);
      let msgs: NlMessage[];
      try {
        msgs = splitMessages(data);
      } catch (err) {
        if (!(err instanceof MalformedMessageError)) throw err;
        this.counters.malformed++;
        continue;
      }
      for (const m of msgs) {
        if (m.seq !== seq) {
          this.counters.stray++;
          continue;
        }
        if (m.flags & NLM_F.DUMP_INTR) interrupted = true;
        if (m.type === NLMSG.ERROR) {
          let e;
          try {
            e = decodeError(m);
          } catch (err) {
            if (!(err instanceof MalformedMessageError)) throw err;
            this.counters.malformed++;
            throw new NetlinkError(operation, 5 /* EIO */, 'malformed error message');
          }
          if (e.errno !== 0) throw new NetlinkError(operation, e.errno, e.message);
          return out; // the ack
        }
        if (m.type === NLMSG.DONE) {
          if (interrupted) throw new DumpInterrupted();
          return out;
        }
        out.push(m);
        if (!dump && !(m.flags & NLM_F.MULTI) && !(flags & NLM_F.ACK)) return out;
      }
    }
  }
}

class DumpInterrupted extends Error {}

function describeRoute(r: { dst: string; gateway?: string; link?: LinkRef; metric?: number; table?: number }): string {
  let s = r.dst === '' ? 'default' : r.dst;
  if (r.gateway) s += ` via ${r.gateway}`;
  if (r.link !== undefined) s += ` dev ${r.link}`;
  if (r.metric !== undefined) s += ` metric ${r.metric}`;
  if (r.table !== undefined && r.table !== RT_TABLE.MAIN) s += ` table ${r.table}`;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Subscription.

export const DEFAULT_GROUPS = RTMGRP.LINK | RTMGRP.IPV4_IFADDR | RTMGRP.IPV4_ROUTE | RTMGRP.IPV6_IFADDR | RTMGRP.IPV6_ROUTE;

export interface SubscriptionHandlers {
  onEvent(ev: RtnlEvent): void;
  /** The kernel dropped events (ENOBUFS): the subscriber must list everything again. */
  onOverrun?(): void;
  /** A socket error that ended the subscription. */
  onError?(err: Error): void;
  /** onEvent threw; the subscription goes on. */
  onHandlerError?(err: Error): void;
}

export interface Subscription {
  readonly counters: RtnlCounters;
  close(): void;
}

/** Receives link/address/route changes until closed. Malformed messages are counted and dropped. */
export async function subscribe(h: SubscriptionHandlers, opts: { groups?: number; poller?: Poller } = {}): Promise<Subscription> {
  await initNative();
  const sock = RawSocket.open(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE, 'rtnetlink events', opts.poller);
  try {
    // A large receive buffer makes overruns rare under bursts (many routes at once).
    try {
      sock.setsockoptInt(SOL_SOCKET, SO_RCVBUFFORCE, 4 << 20, 'setsockopt(SO_RCVBUFFORCE)');
    } catch {
      sock.setsockoptInt(SOL_SOCKET, SO_RCVBUF, 4 << 20, 'setsockopt(SO_RCVBUF)');
    }
    sock.bind(sockaddrNl(opts.groups ?? DEFAULT_GROUPS));
  } catch (err) {
    sock.close();
    throw err;
  }
  const counters: RtnlCounters = { malformed: 0, stray: 0 };
  const buf = Buffer.alloc(RECV_BUF);
  let closed = false;
  void (async () => {
    while (!closed) {
      let data: Buffer;
      try {
        ({ data } = await sock.recv(buf));
      } catch (err) {
        if (closed) return;
        if (err instanceof SyscallError && err.errno === 105 /* ENOBUFS */) {
          h.onOverrun?.();
          continue;
        }
        closed = true;
        sock.close();
        h.onError?.(err as Error);
        return;
      }
      let msgs: NlMessage[];
      try {
        msgs = splitMessages(data);
      } catch {
        counters.malformed++;
        continue;
      }
      for (const m of msgs) {
        if (m.type === NLMSG.OVERRUN) {
          h.onOverrun?.();
          continue;
        }
        let ev: RtnlEvent | undefined;
        try {
          ev = decodeEvent(m);
        } catch {
          counters.malformed++;
          continue;
        }
        if (!ev || closed) continue;
        try {
          h.onEvent(ev);
        } catch (err) {
          h.onHandlerError?.(err as Error);
        }
      }
    }
  })();
  return {
    counters,
    close() {
      if (closed) return;
      closed = true;
      sock.close();
    },
  };
}

