// NetworkManager: networkd's controller. It observes links, addresses and routes through an
// rtnetlink subscription (after one full listing) and publishes them as resources; it applies
// its inputs (the NetworkConfig and the kernel arguments) to the links: MTU, up, VLANs, static
// addresses and routes, and a DHCPv4 client where asked (by default on every physical link
// without configuration). Leases become an address with the lease's lifetime, routes and MTU;
// resolvers, hostname and time servers come from the configuration, else DHCP, else defaults,
// and are published as resources and written to resolv.conf, hosts and hostname (atomically).
//
// Nothing stops networkd: an error on a link (netlink refusal, missing device, DHCP socket) is
// reported for that interface (log and status()) and retried; malformed packets are counted.
import { writeFileAtomic } from '../lib/atomic.ts';
import type { Logger } from '../lib/log.ts';
import type { Publisher } from '../daemon/publisher.ts';
import {
  type KernelNetworkArgs,
  type NetworkConfig,
  type RouteConfig,
  kernelArgsToConfig,
  mergeConfigs,
  parseKernelNetworkArgs,
} from './config.ts';
import { DhcpClient, type DhcpClientOptions, type DhcpCounters, type DhcpEvent, type DhcpState, type DhcpTransport, INFINITE_LEASE, type Lease } from './dhcp/client.ts';
import { UdpTransport } from './dhcp/transport.ts';
import { NETWORK_NAMESPACE } from '../contract/resources/hostname-status.ts';
import { familyOf, networkOf, parseCidr } from '../lib/ip.ts';
import { type Address, type Attr, type Link, type Route, type RtnlEvent, RTPROT, RT_SCOPE, RT_TABLE } from './netlink.ts';
import { type LinkPlan, planNetwork } from './plan.ts';
import {
  type HostnameSpec,
  type LinkSysInfo,
  type ResolverSpec,
  RESOURCE_TYPES,
  addressId,
  addressSpec,
  linkSpec,
  nodeAddresses,
  publishedRoute,
  renderHosts,
  renderResolvConf,
  routeId,
  routeSpec,
} from './resources.ts';
import { type LinkRef, type LinkSpec, NetlinkError, Rtnl, type RtnlCounters, type Subscription, type SubscriptionHandlers, subscribe } from './rtnl.ts';
import { virtualLinkData } from './virtual-links.ts';

/** The rtnetlink operations the manager uses (Rtnl has them; tests pass a fake). */
export interface RtnlOps {
  readonly counters: RtnlCounters;
  listLinks(): Promise<Link[]>;
  listAddresses(): Promise<Address[]>;
  listRoutes(opts?: { table?: number }): Promise<Route[]>;
  setLinkUp(ref: LinkRef, up?: boolean): Promise<void>;
  setMtu(ref: LinkRef, mtu: number): Promise<void>;
  createVlan(v: { name: string; parent: LinkRef; id: number; mtu?: number }): Promise<void>;
  createLink(spec: LinkSpec): Promise<void>;
  changeLinkInfo(ref: LinkRef, kind: string, data: Attr[]): Promise<void>;
  setMaster(ref: LinkRef, master: number): Promise<void>;
  addAddress(link: LinkRef, a: { address: string; validLifetime?: number; preferredLifetime?: number; replace?: boolean }): Promise<void>;
  deleteAddress(link: LinkRef, address: string): Promise<void>;
  addRoute(r: Parameters<Rtnl['addRoute']>[0]): Promise<void>;
  deleteRoute(r: Parameters<Rtnl['deleteRoute']>[0]): Promise<void>;
  close?(): void;
}

export interface NetworkManagerOptions {
  publisher: Publisher;
  log: Logger;
  config?: NetworkConfig;
  /** The kernel command line (ip=, bronze.network.interface.ignore=, bronze.hostname=). */
  cmdline?: string;
  /** Default: a real Rtnl, closed on stop. */
  rtnl?: RtnlOps;
  subscribe?: (h: SubscriptionHandlers) => Promise<Subscription>;
  /** Change links at all. False: observe and publish only (host runs). Default true. */
  manage?: boolean;
  /** Where to write; null to not write. Defaults /system/etc/resolv.conf, /system/etc/hosts
   *  and /system/etc/hostname (the node's hostname, as on Talos). */
  resolvConfPath?: string | null;
  hostsPath?: string | null;
  hostnamePath?: string | null;
  /** Sets the kernel's hostname (sethostname); omitted: not set. */
  setHostname?: (name: string) => void;
  /** Publish HostnameStatuses (default true). */
  publishHostname?: boolean;
  /** Types this daemon may write (machined refuses the others); default all. */
  mayPublish?: (type: string) => boolean;
  /** The hostname when neither config nor DHCP names one. */
  defaultHostname?: () => string;
  /** When neither configuration nor DHCP gives any (Talos's defaults). */
  defaultNameservers?: string[];
  defaultTimeServers?: string[];
  /** DHCP client tuning (timeouts), and the transport factory (tests). */
  dhcp?: Partial<Omit<DhcpClientOptions, 'mac' | 'transport' | 'onEvent'>>;
  dhcpTransport?: (link: string, onError: (err: Error) => void) => Promise<DhcpTransport>;
  onDhcpEvent?: (link: string, ev: DhcpEvent) => void;
  /** Wait before retrying a link that failed. Default 10 s. */
  retryMs?: number;
  /** Batch events this long before publishing. Default 20 ms. */
  debounceMs?: number;
  /** What sysfs says of a link (driver, speed, duplex); omitted: not read. */
  linkInfo?: (name: string) => LinkSysInfo;
}

export interface InterfaceStatus {
  name: string;
  source: string;
  /** 'configured', 'waiting' (link absent), 'error' (last attempt failed). */
  state: 'configured' | 'waiting' | 'error';
  errors: Array<{ at: string; message: string }>;
  dhcp?: { state: DhcpState; address?: string; serverId?: string; leaseTime?: number; counters: DhcpCounters };
}

export interface NetworkStatus {
  interfaces: InterfaceStatus[];
  ignored: string[];
  problems: Array<{ link: string; message: string }>;
  netlink: { events: number; overruns: number; malformedRequests: number; malformedEvents: number };
  hostname: HostnameSpec;
  resolvers: ResolverSpec;
  timeServers: string[];
}

interface DhcpHandle {
  client: DhcpClient;
  linkIndex: number;
  lease?: Lease;
  /** How the lease's routes were added: their metric, or none (DHCPv4Config ignoreRoutes). */
  routes?: { metric: number; ignored: boolean };
  /** Lease application, serialized per link. */
  chain: Promise<void>;
}

const MAX_ERRORS = 10;

function routeKey(r: Route): string {
  return `${r.family}|${r.table}|${r.dst}|${r.gateway ?? ''}|${r.oif ?? ''}|${r.priority}`;
}
function addrKey(a: Address): string {
  return `${a.index}|${a.address}/${a.prefixLength}`;
}
function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
function isCode(err: unknown, ...codes: string[]): boolean {
  return err instanceof NetlinkError && codes.includes(err.code);
}

export class NetworkManager {
  readonly #o: NetworkManagerOptions;
  readonly #kernel: KernelNetworkArgs;
  #config: NetworkConfig;
  #rtnl: RtnlOps | undefined;
  #ownRtnl = false;
  #sub: Subscription | undefined;

  // What the kernel has.
  readonly #links = new Map<number, Link>();
  readonly #addresses = new Map<string, Address>();
  readonly #routes = new Map<string, Route>();
  #dumping = false;
  #pendingEvents: RtnlEvent[] = [];
  readonly #netlinkStats = { events: 0, overruns: 0 };

  // What networkd does.
  #plans: LinkPlan[] = [];
  #ignored: string[] = [];
  #problems: NetworkStatus['problems'] = [];
  readonly #status = new Map<string, InterfaceStatus>();
  readonly #dhcp = new Map<string, DhcpHandle>();
  /** The options last set on each bond or bridge networkd configures. */
  readonly #virtualOptions = new Map<string, string>();
  /** Static addresses and routes networkd added, per link, to remove when the config drops them. */
  readonly #appliedAddresses = new Map<string, Set<string>>();

  // Serialization.
  #reconciling: Promise<void> | undefined;
  #reconcileAgain = false;
  #syncing: Promise<void> | undefined;
  #syncAgain = false;
  #syncTimer: ReturnType<typeof setTimeout> | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  // What was published and written.
  readonly #published = new Map<string, Map<string, string>>();
  readonly #written = new Map<string, string>();
  #hostnameSet = '';

  constructor(o: NetworkManagerOptions) {
    this.#o = o;
    this.#kernel = parseKernelNetworkArgs(o.cmdline ?? '');
    this.#config = o.config ?? {};
  }

  get #manage(): boolean {
    return this.#o.manage ?? true;
  }

  async start(): Promise<void> {
    if (!this.#o.rtnl) {
      this.#rtnl = await Rtnl.open();
      this.#ownRtnl = true;
    } else {
      this.#rtnl = this.#o.rtnl;
    }
    for (const e of this.#effective().errors) this.#o.log.warn(`kernel arguments: ${e}`);
    this.#sub = await (this.#o.subscribe ?? ((h) => subscribe(h)))({
      onEvent: (ev) => this.#onEvent(ev),
      onOverrun: () => {
        this.#netlinkStats.overruns++;
        void this.#resync();
      },
      onError: (err) => this.#o.log.error(`netlink subscription ended: ${errText(err)}`),
      onHandlerError: (err) => this.#o.log.error(`netlink event handling: ${errText(err)}`),
    });
    await this.#resync();
    await this.#reconcile();
    await this.#sync();
  }

  /** Stops DHCP (releasing leases unless release is false), the subscription and timers. */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#syncTimer);
    clearTimeout(this.#retryTimer);
    await this.#reconciling?.catch(() => {});
    await Promise.all(
      [...this.#dhcp.entries()].map(async ([name, h]) => {
        await h.client.stop({ release: opts.release ?? true }).catch((err) => this.#report(name, `DHCP stop: ${errText(err)}`));
        await h.chain;
      }),
    );
    this.#dhcp.clear();
    await this.#syncing?.catch(() => {});
    this.#sub?.close();
    if (this.#ownRtnl) this.#rtnl?.close?.();
  }

  /** New configuration: applied at once. */
  setConfig(config: NetworkConfig): void {
    this.#config = config;
    this.#requestReconcile();
  }

  status(): NetworkStatus {
    const interfaces = [...this.#status.values()].map((s) => {
      const h = this.#dhcp.get(s.name);
      const out: InterfaceStatus = { ...s, errors: [...s.errors] };
      if (h) {
        out.dhcp = { state: h.client.state, counters: { ...h.client.counters } };
        if (h.lease) Object.assign(out.dhcp, { address: `${h.lease.address}/${h.lease.prefixLength}`, serverId: h.lease.serverId, leaseTime: h.lease.leaseTime });
      }
      return out;
    });
    const sub = this.#sub?.counters;
    return {
      interfaces,
      ignored: [...this.#ignored],
      problems: [...this.#problems],
      netlink: {
        ...this.#netlinkStats,
        malformedRequests: this.#rtnl?.counters.malformed ?? 0,
        malformedEvents: sub?.malformed ?? 0,
      },
      hostname: this.#hostname(),
      resolvers: this.#resolvers(),
      timeServers: this.#timeServers(),
    };
  }

  /** Resolves once pending reconciliation and publishing are done (tests). */
  async settled(): Promise<void> {
    for (let i = 0; i < 20; i++) {
      const pending = [this.#reconciling, this.#syncing, ...[...this.#dhcp.values()].map((h) => h.chain)].filter(Boolean);
      if (pending.length === 0 && this.#syncTimer === undefined) return;
      if (this.#syncTimer !== undefined) {
        clearTimeout(this.#syncTimer);
        this.#syncTimer = undefined;
        await this.#sync();
      }
      await Promise.all(pending.map((p) => p!.catch(() => {})));
    }
  }

  // --- inputs -----------------------------------------------------------------------------

  #effective(): { config: NetworkConfig; defaultDhcp: boolean; errors: string[] } {
    const k = kernelArgsToConfig(this.#kernel);
    return { config: mergeConfigs(k.config, this.#config), defaultDhcp: k.defaultDhcp ?? true, errors: k.errors };
  }

  // --- observing --------------------------------------------------------------------------

  #onEvent(ev: RtnlEvent): void {
    this.#netlinkStats.events++;
    if (this.#dumping) {
      this.#pendingEvents.push(ev);
      return;
    }
    this.#apply(ev);
    this.#scheduleSync();
  }

  #apply(ev: RtnlEvent): void {
    switch (ev.kind) {
      case 'link': {
        const before = this.#links.get(ev.link.index);
        if (ev.action === 'new') this.#links.set(ev.link.index, ev.link);
        else {
          this.#links.delete(ev.link.index);
          for (const [k, a] of this.#addresses) if (a.index === ev.link.index) this.#addresses.delete(k);
          for (const [k, r] of this.#routes) if (r.oif === ev.link.index) this.#routes.delete(k);
        }
        // A link came, went or was renamed: the plan may change.
        if (ev.action === 'del' || !before || before.name !== ev.link.name) this.#requestReconcile();
        break;
      }
      case 'address':
        if (ev.action === 'new') this.#addresses.set(addrKey(ev.address), ev.address);
        else this.#addresses.delete(addrKey(ev.address));
        break;
      case 'route':
        if (ev.action === 'new') this.#routes.set(routeKey(ev.route), ev.route);
        else this.#routes.delete(routeKey(ev.route));
        break;
    }
  }

  async #refreshAddressesAndRoutes(): Promise<void> {
    const rtnl = this.#rtnl!;
    this.#dumping = true;
    try {
      const [addresses, routes] = [await rtnl.listAddresses(), await rtnl.listRoutes({ table: 0 })];
      this.#addresses.clear();
      this.#routes.clear();
      for (const a of addresses) this.#addresses.set(addrKey(a), a);
      for (const r of routes) this.#routes.set(routeKey(r), r);
    } catch (err) {
      this.#o.log.error(`listing addresses and routes: ${errText(err)}`);
    } finally {
      this.#dumping = false;
      for (const ev of this.#pendingEvents.splice(0)) this.#apply(ev);
    }
  }

  /** Lists everything again (start, and after the kernel dropped events). */
  async #resync(): Promise<void> {
    const rtnl = this.#rtnl!;
    this.#dumping = true;
    try {
      const [links, addresses, routes] = [await rtnl.listLinks(), await rtnl.listAddresses(), await rtnl.listRoutes({ table: 0 })];
      this.#links.clear();
      this.#addresses.clear();
      this.#routes.clear();
      for (const l of links) this.#links.set(l.index, l);
      for (const a of addresses) this.#addresses.set(addrKey(a), a);
      for (const r of routes) this.#routes.set(routeKey(r), r);
    } catch (err) {
      this.#o.log.error(`listing links, addresses and routes: ${errText(err)}`);
    } finally {
      this.#dumping = false;
      for (const ev of this.#pendingEvents.splice(0)) this.#apply(ev);
    }
    this.#requestReconcile();
    this.#scheduleSync();
  }

  #linkByName(name: string): Link | undefined {
    for (const l of this.#links.values()) if (l.name === name) return l;
    return undefined;
  }

  // --- reporting --------------------------------------------------------------------------

  #statusOf(name: string, source = 'config'): InterfaceStatus {
    let s = this.#status.get(name);
    if (!s) this.#status.set(name, (s = { name, source, state: 'configured', errors: [] }));
    return s;
  }

  #report(name: string, message: string): void {
    this.#o.log.warn(`${name}: ${message}`);
    const s = this.#statusOf(name);
    s.errors.push({ at: new Date().toISOString(), message });
    if (s.errors.length > MAX_ERRORS) s.errors.shift();
  }

  // --- applying the configuration ----------------------------------------------------------

  #requestReconcile(): void {
    if (this.#stopped || !this.#rtnl) return;
    if (this.#reconciling) {
      this.#reconcileAgain = true;
      return;
    }
    void this.#reconcile();
  }

  #reconcile(): Promise<void> {
    if (this.#reconciling) {
      this.#reconcileAgain = true;
      return this.#reconciling;
    }
    const run = async () => {
      do {
        this.#reconcileAgain = false;
        await this.#reconcileOnce().catch((err) => this.#o.log.error(`reconcile: ${errText(err)}`));
      } while (this.#reconcileAgain && !this.#stopped);
    };
    this.#reconciling = run().finally(() => {
      this.#reconciling = undefined;
    });
    return this.#reconciling;
  }

  async #reconcileOnce(): Promise<void> {
    const eff = this.#effective();
    const plan = planNetwork([...this.#links.values()], eff.config, eff.defaultDhcp);
    this.#plans = plan.plans;
    this.#ignored = plan.ignored;
    if (JSON.stringify(plan.problems) !== JSON.stringify(this.#problems)) for (const p of plan.problems) this.#o.log.warn(`${p.link}: ${p.message}`);
    this.#problems = plan.problems;
    // DHCP on links no longer planned (ignored, unconfigured, gone or recreated) stops first.
    const wanted = new Set(plan.plans.filter((p) => p.dhcp && this.#linkByName(p.name)).map((p) => p.name));
    for (const [name, h] of this.#dhcp) {
      const present = this.#links.get(h.linkIndex)?.name === name;
      if (wanted.has(name) && present) continue;
      // Still registered while it stops, so that the release's clean-up is chained (and
      // awaited here) rather than racing with the static configuration applied below.
      await h.client.stop({ release: present });
      await h.chain;
      this.#dhcp.delete(name);
    }
    let failed = false;
    if (this.#manage) {
      // Plans are compared with what the kernel has now, not with the event-fed view, which
      // may lag behind what was just done (a DHCP release removing its address and route).
      await this.#refreshAddressesAndRoutes();
      // Parents before VLANs.
      const ordered = [...plan.plans].sort((a, b) => Number(!!a.vlan) - Number(!!b.vlan));
      for (const p of ordered) {
        if (this.#stopped) return;
        if (!(await this.#applyPlan(p))) failed = true;
      }
    }
    for (const name of [...this.#status.keys()]) if (!plan.plans.some((p) => p.name === name)) this.#status.delete(name);
    clearTimeout(this.#retryTimer);
    if (failed && !this.#stopped) {
      this.#retryTimer = setTimeout(() => this.#requestReconcile(), this.#o.retryMs ?? 10_000);
      this.#retryTimer.unref?.();
    }
    this.#scheduleSync();
  }

  /** Makes one link match its plan; false when something failed (reported). */
  async #applyPlan(p: LinkPlan): Promise<boolean> {
    const rtnl = this.#rtnl!;
    const status = this.#statusOf(p.name, p.source);
    status.source = p.source;
    let link = this.#linkByName(p.name);
    if (!link && p.vlan) {
      const parent = this.#linkByName(p.vlan.parent);
      if (!parent) {
        status.state = 'waiting';
        return true;
      }
      try {
        await rtnl.createVlan({ name: p.name, parent: parent.index, id: p.vlan.id, ...(p.mtu ? { mtu: p.mtu } : {}) });
        this.#o.log.info(`${p.name}: created VLAN ${p.vlan.id} on ${p.vlan.parent}`);
      } catch (err) {
        if (!isCode(err, 'EEXIST')) {
          status.state = 'error';
          this.#report(p.name, errText(err));
          return false;
        }
      }
      link = (await rtnl.listLinks().catch(() => [])).find((l) => l.name === p.name);
      if (link) this.#links.set(link.index, link);
    }
    if (!link && p.virtual) {
      try {
        await rtnl.createLink({ name: p.name, kind: p.virtual.kind, data: virtualLinkData(p.virtual), ...(p.virtual.mac ? { mac: p.virtual.mac } : {}), ...(p.mtu ? { mtu: p.mtu } : {}) });
        this.#o.log.info(`${p.name}: created ${p.virtual.kind}`);
      } catch (err) {
        if (!isCode(err, 'EEXIST')) {
          status.state = 'error';
          this.#report(p.name, errText(err));
          return false;
        }
      }
      link = (await rtnl.listLinks().catch(() => [])).find((l) => l.name === p.name);
      if (link) this.#links.set(link.index, link);
    }
    if (!link) {
      if (status.state !== 'waiting') this.#o.log.info(`${p.name}: waiting for the link to appear`);
      status.state = 'waiting';
      return true;
    }
    let ok = true;
    const step = async (what: string, fn: () => Promise<void>) => {
      try {
        await fn();
      } catch (err) {
        ok = false;
        this.#report(p.name, `${what}: ${errText(err)}`);
      }
    };
    const index = link.index;
    if (p.virtual) {
      // The link may exist already: the bonding driver makes bond0 itself when built in, and a
      // previous configuration may have made it with other options. Its options are set once
      // per change, down (a bond changes mode only while down and without members).
      const want = JSON.stringify(p.virtual.options);
      if (link.kind !== p.virtual.kind) {
        this.#report(p.name, `a link ${p.name} of kind ${link.kind ?? 'hardware'} exists where a ${p.virtual.kind} is configured`);
        status.state = 'error';
        return false;
      }
      if (this.#virtualOptions.get(p.name) !== want) {
        if (link.up) await step('set down to change its options', () => rtnl.setLinkUp(index, false));
        await step(`set ${p.virtual.kind} options`, () => rtnl.changeLinkInfo(index, p.virtual!.kind, virtualLinkData(p.virtual!)));
        if (ok) {
          this.#virtualOptions.set(p.name, want);
          this.#o.log.info(`${p.name}: ${p.virtual.kind} options ${want}`);
        }
        link = { ...link, up: false };
      }
    }
    if (p.master !== undefined) {
      const master = this.#linkByName(p.master);
      if (!master) {
        status.state = 'waiting';
        return true;
      }
      if (link.master !== master.index) {
        // A bond takes only links that are down; a bridge takes them either way.
        if (link.up) await step('set down to enslave', () => rtnl.setLinkUp(index, false));
        await step(`enslave to ${p.master}`, () => rtnl.setMaster(index, master.index));
        if (ok) this.#o.log.info(`${p.name}: member of ${p.master}`);
        link = { ...link, up: false, master: master.index };
      }
    }
    if (p.mtu !== undefined && link.mtu !== p.mtu) await step(`set MTU ${p.mtu}`, () => rtnl.setMtu(index, p.mtu!));
    if (p.up && !link.up) await step('set up', () => rtnl.setLinkUp(index, true));

    // Static addresses: add the missing, remove those networkd added and the config dropped.
    const have = new Set([...this.#addresses.values()].filter((a) => a.index === index).map((a) => `${a.address}/${a.prefixLength}`));
    const want = new Set(p.addresses.map((a) => normalizeCidr(a)));
    const applied = this.#appliedAddresses.get(p.name) ?? new Set<string>();
    for (const a of want) {
      if (!have.has(a)) await step(`add address ${a}`, () => rtnl.addAddress(index, { address: a, replace: true }));
      applied.add(a);
    }
    for (const a of [...applied]) {
      if (want.has(a)) continue;
      applied.delete(a);
      if (have.has(a)) await step(`remove address ${a}`, () => rtnl.deleteAddress(index, a).catch((e) => (isCode(e, 'EADDRNOTAVAIL') ? undefined : Promise.reject(e))));
    }
    this.#appliedAddresses.set(p.name, applied);

    for (const r of p.routes) {
      if (this.#hasRoute(r, index)) continue;
      await step(`add route ${r.network} via ${r.gateway ?? '-'}`, () => rtnl.addRoute(configRoute(r, index)));
    }

    if (p.dhcp && !this.#dhcp.has(p.name)) await step('start DHCP', () => this.#startDhcp(p, link!));
    // A lease taken under other settings (the route metric, DHCPv4Config ignoreRoutes): its routes again.
    const h = this.#dhcp.get(p.name);
    if (h?.lease && h.routes && (h.routes.metric !== p.routeMetric || h.routes.ignored !== !!p.ignoreDhcpRoutes)) {
      const { lease, routes } = h;
      this.#chain(p.name, h, async () => {
        if (!routes.ignored) await this.#removeLeaseRoutes(p.name, h.linkIndex, lease, routes.metric);
        await this.#applyLease(p.name, h, lease);
      });
    }
    status.state = ok ? 'configured' : 'error';
    return ok;
  }

  #hasRoute(r: RouteConfig, oif: number): boolean {
    const req = configRoute(r, oif);
    const dst = req.dst === 'default' ? (req.family === 'inet6' ? '::/0' : '0.0.0.0/0') : normalizeCidr(req.dst);
    for (const x of this.#routes.values()) {
      if (x.table === RT_TABLE.MAIN && x.dst === dst && (x.gateway ?? undefined) === (req.gateway ?? undefined) && x.priority === (req.metric ?? 0) && x.oif === oif) return true;
    }
    return false;
  }

  // --- DHCP -------------------------------------------------------------------------------

  async #startDhcp(p: LinkPlan, link: Link): Promise<void> {
    const name = p.name;
    const open = this.#o.dhcpTransport ?? ((l: string, onError: (e: Error) => void) => UdpTransport.open(l, { onError }));
    const transport = await open(name, (err) => {
      this.#report(name, `DHCP socket: ${errText(err)}`);
      const h = this.#dhcp.get(name);
      if (h?.client === client) {
        this.#dhcp.delete(name);
        void h.client.stop({ release: false });
        this.#requestReconcile();
      }
    });
    const hostname = this.#effective().config.hostname?.split('.')[0];
    const client: DhcpClient = new DhcpClient({
      ...this.#o.dhcp,
      ...(hostname ? { hostname } : {}),
      mac: link.mac,
      transport,
      onEvent: (ev) => this.#onDhcp(name, ev),
    });
    const h: DhcpHandle = { client, linkIndex: link.index, chain: Promise.resolve() };
    this.#dhcp.set(name, h);
    this.#statusOf(name).source = p.source;
    this.#o.log.info(`${name}: DHCP started`);
    client.start();
  }

  #onDhcp(name: string, ev: DhcpEvent): void {
    try {
      this.#o.onDhcpEvent?.(name, ev);
    } catch {
      /* a listener's problem */
    }
    const h = this.#dhcp.get(name);
    switch (ev.type) {
      case 'bound':
        if (!h) return;
        h.lease = ev.lease;
        this.#o.log.info(
          `${name}: DHCP ${ev.via === 'requesting' ? 'lease' : 'renewed'} ${ev.lease.address}/${ev.lease.prefixLength} from ${ev.lease.serverId} for ${ev.lease.leaseTime} s`,
        );
        this.#chain(name, h, () => this.#applyLease(name, h, ev.lease, ev.previous));
        break;
      case 'expired':
      case 'released':
        if (h) h.lease = undefined;
        this.#o.log.info(`${name}: DHCP lease ${ev.lease.address} ${ev.type === 'released' ? 'released' : `ended (${ev.reason})`}`);
        if (h) this.#chain(name, h, () => this.#removeLease(name, h, ev.lease));
        else void this.#removeLease(name, undefined, ev.lease);
        break;
      case 'nak':
        this.#report(name, `DHCP NAK from ${ev.serverId ?? 'a server'}${ev.message ? `: ${ev.message}` : ''}`);
        break;
      case 'error':
        this.#report(name, `DHCP: ${errText(ev.error)}`);
        break;
      case 'state':
        break;
    }
    this.#scheduleSync();
  }

  #chain(name: string, h: DhcpHandle, fn: () => Promise<void>): void {
    h.chain = h.chain.then(fn).catch((err) => this.#report(name, errText(err)));
  }

  #leaseRoutes(lease: Lease): Array<{ dst: string; gateway?: string; scope?: number }> {
    const o = lease.options;
    const onLink = (gw: string) => lease.prefixLength === 0 || networkOf({ address: gw, prefixLength: lease.prefixLength }) === networkOf({ address: lease.address, prefixLength: lease.prefixLength });
    const out: Array<{ dst: string; gateway?: string; scope?: number }> = [];
    const via = (dst: string, gw: string) => {
      // A router outside the leased prefix (e.g. a /32 lease) needs a host route first.
      if (!onLink(gw) && !out.some((r) => r.dst === `${gw}/32`)) out.push({ dst: `${gw}/32`, scope: RT_SCOPE.LINK });
      out.push({ dst, gateway: gw });
    };
    if (o.classlessRoutes.length > 0) {
      // RFC 3442: with classless routes the router option is ignored.
      for (const r of o.classlessRoutes) {
        if (r.router === '0.0.0.0') out.push({ dst: r.destination, scope: RT_SCOPE.LINK });
        else via(r.destination, r.router);
      }
    } else if (o.routers[0]) {
      via('0.0.0.0/0', o.routers[0]);
    }
    return out;
  }

  async #applyLease(name: string, h: DhcpHandle, lease: Lease, previous?: Lease): Promise<void> {
    if (!this.#manage || this.#stopped) return;
    const rtnl = this.#rtnl!;
    const plan = this.#plans.find((p) => p.name === name);
    const metric = plan?.routeMetric ?? 1024;
    const index = h.linkIndex;
    const cidr = `${lease.address}/${lease.prefixLength}`;
    if (previous && (previous.address !== lease.address || previous.prefixLength !== lease.prefixLength)) {
      await this.#removeLease(name, undefined, previous);
    }
    const life: { validLifetime?: number; preferredLifetime?: number } = {};
    if (lease.leaseTime !== INFINITE_LEASE) {
      const now = this.#o.dhcp?.clock?.now() ?? Date.now();
      const left = Math.max(1, Math.round(lease.leaseTime - (now - lease.obtainedAt) / 1000));
      life.validLifetime = left;
      life.preferredLifetime = left;
    }
    try {
      await rtnl.addAddress(index, { address: cidr, ...life, replace: true });
    } catch (err) {
      this.#report(name, `DHCP address ${cidr}: ${errText(err)}`);
      return;
    }
    const mtu = lease.options.mtu;
    if (mtu && mtu >= 68 && plan?.mtu === undefined && this.#links.get(index)?.mtu !== mtu) {
      await rtnl.setMtu(index, mtu).catch((err) => this.#report(name, `DHCP MTU ${mtu}: ${errText(err)}`));
    }
    for (const r of plan?.ignoreDhcpRoutes ? [] : this.#leaseRoutes(lease)) {
      await rtnl
        .addRoute({ dst: r.dst, ...(r.gateway ? { gateway: r.gateway } : {}), link: index, metric, protocol: RTPROT.DHCP, ...(r.scope !== undefined ? { scope: r.scope } : {}), prefsrc: lease.address, replace: true })
        .catch((err) => this.#report(name, `DHCP route ${r.dst}${r.gateway ? ` via ${r.gateway}` : ''}: ${errText(err)}`));
    }
    h.routes = { metric, ignored: !!plan?.ignoreDhcpRoutes };
  }

  /** A lease's routes as they were added (their metric), removed. */
  async #removeLeaseRoutes(name: string, index: number, lease: Lease, metric: number): Promise<void> {
    for (const r of this.#leaseRoutes(lease).reverse()) {
      await this.#rtnl!
        .deleteRoute({ dst: r.dst, ...(r.gateway ? { gateway: r.gateway } : {}), link: index, metric })
        .catch((err) => (isCode(err, 'ESRCH', 'ENODEV') ? undefined : this.#report(name, `DHCP route ${r.dst}: ${errText(err)}`)));
    }
  }

  async #removeLease(name: string, h: DhcpHandle | undefined, lease: Lease): Promise<void> {
    if (!this.#manage) return;
    const rtnl = this.#rtnl!;
    const index = h?.linkIndex ?? this.#linkByName(name)?.index;
    if (index === undefined) return;
    const plan = this.#plans.find((p) => p.name === name);
    if (!h?.routes?.ignored) await this.#removeLeaseRoutes(name, index, lease, h?.routes?.metric ?? plan?.routeMetric ?? 1024);
    await rtnl
      .deleteAddress(index, `${lease.address}/${lease.prefixLength}`)
      .catch((err) => (isCode(err, 'EADDRNOTAVAIL', 'ENODEV') ? undefined : this.#report(name, `DHCP address: ${errText(err)}`)));
  }

  #leases(): Lease[] {
    const order = new Map(this.#plans.map((p, i) => [p.name, i]));
    return [...this.#dhcp.entries()]
      .filter(([, h]) => h.lease)
      .sort(([a], [b]) => (order.get(a) ?? 0) - (order.get(b) ?? 0))
      .map(([, h]) => h.lease!);
  }

  // --- derived state ----------------------------------------------------------------------

  #hostname(): HostnameSpec {
    const cfg = this.#effective().config;
    const split = (fqdn: string) => {
      const [host, ...rest] = fqdn.split('.');
      return { hostname: host!, domainname: rest.join('.') };
    };
    if (cfg.hostname) return split(cfg.hostname);
    for (const l of this.#leases()) {
      if (l.options.hostname) {
        const h = split(l.options.hostname);
        return { hostname: h.hostname, domainname: h.domainname || (l.options.domainName ?? '') };
      }
    }
    const domain = this.#leases().find((l) => l.options.domainName)?.options.domainName ?? '';
    return { hostname: this.#o.defaultHostname?.() ?? 'bronze', domainname: domain };
  }

  #resolvers(): ResolverSpec {
    const cfg = this.#effective().config;
    const leases = this.#leases();
    const fromDhcp = [...new Set(leases.flatMap((l) => l.options.dnsServers))];
    const dnsServers = cfg.nameservers?.length ? [...cfg.nameservers] : fromDhcp.length ? fromDhcp : [...(this.#o.defaultNameservers ?? ['1.1.1.1', '8.8.8.8'])];
    let searchDomains: string[];
    if (cfg.searchDomains?.length) searchDomains = [...cfg.searchDomains];
    else {
      const fromLeases = leases.flatMap((l) => (l.options.searchDomains.length ? l.options.searchDomains : l.options.domainName ? [l.options.domainName] : []));
      const domain = this.#hostname().domainname;
      searchDomains = [...new Set(fromLeases.length ? fromLeases : domain ? [domain] : [])];
    }
    return { dnsServers, searchDomains };
  }

  #timeServers(): string[] {
    const cfg = this.#effective().config;
    if (cfg.timeServers?.length) return [...cfg.timeServers];
    const fromDhcp = [...new Set(this.#leases().flatMap((l) => l.options.ntpServers))];
    return fromDhcp.length ? fromDhcp : [...(this.#o.defaultTimeServers ?? ['time.cloudflare.com'])];
  }

  // --- publishing -------------------------------------------------------------------------

  #scheduleSync(): void {
    if (this.#stopped || this.#syncTimer !== undefined) return;
    this.#syncTimer = setTimeout(() => {
      this.#syncTimer = undefined;
      void this.#sync();
    }, this.#o.debounceMs ?? 20);
  }

  #sync(): Promise<void> {
    if (this.#syncing) {
      this.#syncAgain = true;
      return this.#syncing;
    }
    const run = async () => {
      do {
        this.#syncAgain = false;
        await this.#syncOnce().catch((err) => this.#o.log.error(`publishing: ${errText(err)}`));
      } while (this.#syncAgain);
    };
    this.#syncing = run().finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }

  async #syncOnce(): Promise<void> {
    const nameOf = (i: number | undefined) => (i === undefined ? '' : (this.#links.get(i)?.name ?? ''));
    const links = new Map<string, unknown>();
    for (const l of this.#links.values()) links.set(l.name, linkSpec(l, this.#o.linkInfo?.(l.name)));
    const addresses = new Map<string, unknown>();
    for (const a of this.#addresses.values()) {
      const n = nameOf(a.index);
      if (n) addresses.set(addressId(a, n), addressSpec(a, n));
    }
    const routes = new Map<string, unknown>();
    for (const r of this.#routes.values()) if (publishedRoute(r)) routes.set(routeId(r), routeSpec(r, nameOf(r.oif)));
    const current = nodeAddresses([...this.#addresses.values()], this.#links);
    const nodeAddrs = new Map<string, unknown>([
      ['current', { addresses: current }],
      ['default', { addresses: current.slice(0, 1) }],
    ]);
    const hostname = this.#hostname();
    const resolvers = this.#resolvers();
    const timeServers = this.#timeServers();

    let failed = false;
    const publish = async (type: string, desired: Map<string, unknown>) => {
      if (this.#o.mayPublish && !this.#o.mayPublish(type)) return;
      const prev = this.#published.get(type) ?? new Map<string, string>();
      const next = new Map<string, string>();
      for (const [id, spec] of desired) {
        const json = JSON.stringify(spec);
        next.set(id, json);
        if (prev.get(id) === json) continue;
        try {
          await this.#o.publisher.apply(NETWORK_NAMESPACE, type, id, spec);
        } catch (err) {
          failed = true;
          next.delete(id);
          this.#o.log.warn(`publish ${type} ${id}: ${errText(err)}`);
        }
      }
      for (const id of prev.keys()) {
        if (desired.has(id)) continue;
        try {
          await this.#o.publisher.destroy(NETWORK_NAMESPACE, type, id);
        } catch (err) {
          failed = true;
          next.set(id, prev.get(id)!);
          this.#o.log.warn(`destroy ${type} ${id}: ${errText(err)}`);
        }
      }
      this.#published.set(type, next);
    };
    await publish(RESOURCE_TYPES.link, links);
    await publish(RESOURCE_TYPES.address, addresses);
    await publish(RESOURCE_TYPES.route, routes);
    await publish(RESOURCE_TYPES.nodeAddress, nodeAddrs);
    await publish(RESOURCE_TYPES.resolver, new Map([['resolvers', resolvers]]));
    await publish(RESOURCE_TYPES.timeServer, new Map([['timeservers', { timeServers }]]));
    if (this.#o.publishHostname ?? true) await publish(RESOURCE_TYPES.hostname, new Map([['hostname', hostname]]));

    if (this.#manage && this.#o.setHostname && hostname.hostname !== this.#hostnameSet) {
      try {
        this.#o.setHostname(hostname.hostname);
        this.#hostnameSet = hostname.hostname;
        this.#o.log.info(`hostname ${hostname.hostname}`);
      } catch (err) {
        this.#o.log.warn(`set hostname ${hostname.hostname}: ${errText(err)}`);
      }
    }
    const cfg = this.#effective().config;
    const files: Array<[string | null | undefined, string]> = [
      [this.#o.resolvConfPath === undefined ? '/system/etc/resolv.conf' : this.#o.resolvConfPath, renderResolvConf(resolvers)],
      [this.#o.hostsPath === undefined ? '/system/etc/hosts' : this.#o.hostsPath, renderHosts(hostname, current[0]?.split('/')[0], cfg.extraHostEntries)],
      [this.#o.hostnamePath === undefined ? '/system/etc/hostname' : this.#o.hostnamePath, `${hostname.hostname}\n`],
    ];
    for (const [path, text] of files) {
      if (!path || !this.#manage || this.#written.get(path) === text) continue;
      try {
        await writeFileAtomic(path, text, { mode: 0o644, dirMode: 0o755 });
        this.#written.set(path, text);
      } catch (err) {
        failed = true;
        this.#o.log.warn(`write ${path}: ${errText(err)}`);
      }
    }
    if (failed && !this.#stopped) {
      // Try again later (machined may be restarting).
      setTimeout(() => this.#scheduleSync(), this.#o.retryMs ?? 10_000).unref?.();
    }
  }
}

function normalizeCidr(a: string): string {
  const p = parseCidr(a);
  return `${p.address}/${p.prefixLength}`;
}

function configRoute(r: RouteConfig, oif: number) {
  const isDefault = r.network === 'default' || r.network === '0.0.0.0/0' || r.network === '::/0' || r.network === '';
  const family = r.gateway ? familyOf(r.gateway) : isDefault ? (r.network === '::/0' ? 'inet6' : 'inet4') : familyOf(r.network.split('/')[0]!);
  return {
    dst: isDefault ? 'default' : r.network,
    family,
    ...(r.gateway ? { gateway: r.gateway } : {}),
    link: oif,
    metric: r.metric ?? 1024,
    ...(r.source ? { prefsrc: r.source } : {}),
    ...(r.mtu ? { mtu: r.mtu } : {}),
    replace: true,
  } as const;
}
