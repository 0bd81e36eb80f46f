// NetworkManager: networkd's reconciler (not a controller of machined's runtime: it runs in
// networkd's own process and drives the kernel, not resources). It observes links, addresses and routes through an
// rtnetlink subscription (after one full listing: kernel-view.ts) and publishes them as resources (publish.ts); it applies
// its inputs (the NetworkConfig and the kernel arguments) to the links: MTU, up, VLANs, static
// addresses and routes, and a DHCPv4 client where asked (by default on every physical link
// without configuration: link-apply.ts). Leases become an address with the lease's lifetime,
// routes and MTU (leases.ts); resolvers, hostname and time servers come from the configuration,
// else DHCP, else defaults (precedence.ts), and are published as resources and written to resolv.conf, hosts and hostname (atomically).
//
// Nothing stops networkd: an error on a link (netlink refusal, missing device, DHCP socket) is
// reported for that interface (log and status()) and retried; malformed packets are counted.
import type { Logger } from '../lib/log.ts';
import type { Publisher } from '../daemon/publisher.ts';
import { type KernelNetworkArgs, type NetworkConfig, parseKernelNetworkArgs } from './config.ts';
import { DhcpClient, type DhcpClientOptions, type DhcpEvent, type DhcpTransport, type Lease } from './dhcp/client.ts';
import { UdpTransport } from './dhcp/transport.ts';
import { KernelView } from './kernel-view.ts';
import { type DhcpHandle, Leases } from './leases.ts';
import { applyLinkPlan } from './link-apply.ts';
import type { Link, RtnlEvent } from './netlink.ts';
import { type LinkPlan, planNetwork } from './plan.ts';
import { type SettingDefaults, effectiveConfig, hostnameOf, resolversOf, timeServersOf } from './precedence.ts';
import { NetworkPublisher } from './publish.ts';
import type { HostnameStatusSpec } from '../contract/resources/hostname-status.ts';
import type { ResolverStatusSpec } from '../contract/resources/resolver-status.ts';
import type { LinkSysInfo } from './resources.ts';
import { Rtnl, type Subscription, type SubscriptionHandlers, subscribe } from './rtnl.ts';
import type { InterfaceStatus, NetworkStatus, RtnlOps } from './types.ts';

export type { InterfaceStatus, NetworkStatus, RtnlOps };

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

const MAX_ERRORS = 10;

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class NetworkManager {
  readonly #o: NetworkManagerOptions;
  readonly #kernel: KernelNetworkArgs;
  #config: NetworkConfig;
  #rtnl: RtnlOps | undefined;
  #ownRtnl = false;
  #sub: Subscription | undefined;

  // What the kernel has.
  readonly #view: KernelView;
  readonly #netlinkStats = { events: 0, overruns: 0 };

  // What networkd does.
  #plans: LinkPlan[] = [];
  #ignored: string[] = [];
  #problems: NetworkStatus['problems'] = [];
  readonly #status = new Map<string, InterfaceStatus>();
  readonly #dhcp = new Map<string, DhcpHandle>();
  readonly #leases: Leases;
  /** The options last set on each bond or bridge networkd configures. */
  readonly #virtualOptions = new Map<string, string>();
  /** Static addresses and routes networkd added, per link, to remove when the config drops them. */
  readonly #appliedAddresses = new Map<string, Set<string>>();
  readonly #publisher: NetworkPublisher;

  // Serialization.
  #reconciling: Promise<void> | undefined;
  #reconcileAgain = false;
  #syncing: Promise<void> | undefined;
  #syncAgain = false;
  #syncTimer: ReturnType<typeof setTimeout> | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  constructor(o: NetworkManagerOptions) {
    this.#o = o;
    this.#kernel = parseKernelNetworkArgs(o.cmdline ?? '');
    this.#config = o.config ?? {};
    this.#view = new KernelView(o.log);
    this.#leases = new Leases({
      rtnl: () => this.#rtnl!,
      manage: this.#manage,
      stopped: () => this.#stopped,
      plan: (name) => this.#plans.find((p) => p.name === name),
      linkIndex: (name) => this.#view.linkByName(name)?.index,
      linkMtu: (index) => this.#view.links.get(index)?.mtu,
      report: (name, message) => this.#report(name, message),
      now: () => this.#o.dhcp?.clock?.now() ?? Date.now(),
    });
    const path = (p: string | null | undefined, dflt: string) => (p === undefined ? dflt : p);
    this.#publisher = new NetworkPublisher({
      publisher: o.publisher,
      log: o.log,
      manage: this.#manage,
      resolvConfPath: path(o.resolvConfPath, '/system/etc/resolv.conf'),
      hostsPath: path(o.hostsPath, '/system/etc/hosts'),
      hostnamePath: path(o.hostnamePath, '/system/etc/hostname'),
      ...(o.setHostname ? { setHostname: o.setHostname } : {}),
      publishHostname: o.publishHostname ?? true,
      ...(o.mayPublish ? { mayPublish: o.mayPublish } : {}),
      ...(o.linkInfo ? { linkInfo: o.linkInfo } : {}),
    });
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
    const settings = this.#settings();
    return {
      interfaces,
      ignored: [...this.#ignored],
      problems: [...this.#problems],
      netlink: {
        ...this.#netlinkStats,
        malformedRequests: this.#rtnl?.counters.malformed ?? 0,
        malformedEvents: sub?.malformed ?? 0,
      },
      hostname: settings.hostname,
      resolvers: settings.resolvers,
      timeServers: settings.timeServers,
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

  // --- inputs and what precedence makes of them ---------------------------------------------

  #effective(): { config: NetworkConfig; defaultDhcp: boolean; errors: string[] } {
    return effectiveConfig(this.#kernel, this.#config);
  }

  /** The leases held, in the order of the links' plans. */
  #heldLeases(): Lease[] {
    const order = new Map(this.#plans.map((p, i) => [p.name, i]));
    return [...this.#dhcp.entries()]
      .filter(([, h]) => h.lease)
      .sort(([a], [b]) => (order.get(a) ?? 0) - (order.get(b) ?? 0))
      .map(([, h]) => h.lease!);
  }

  #settings(): { config: NetworkConfig; hostname: HostnameStatusSpec; resolvers: ResolverStatusSpec; timeServers: string[] } {
    const config = this.#effective().config;
    const leases = this.#heldLeases();
    const defaults: SettingDefaults = {
      hostname: this.#o.defaultHostname?.() ?? 'bronze',
      nameservers: this.#o.defaultNameservers ?? ['1.1.1.1', '8.8.8.8'],
      timeServers: this.#o.defaultTimeServers ?? ['time.cloudflare.com'],
    };
    return { config, hostname: hostnameOf(config, leases, defaults), resolvers: resolversOf(config, leases, defaults), timeServers: timeServersOf(config, leases, defaults) };
  }

  // --- observing --------------------------------------------------------------------------

  #onEvent(ev: RtnlEvent): void {
    this.#netlinkStats.events++;
    const { held, linksChanged } = this.#view.event(ev);
    if (held) return;
    // A link came, went or was renamed: the plan may change.
    if (linksChanged) this.#requestReconcile();
    this.#scheduleSync();
  }

  /** Lists everything again (start, and after the kernel dropped events). */
  async #resync(): Promise<void> {
    await this.#view.relist(this.#rtnl!);
    this.#requestReconcile();
    this.#scheduleSync();
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
    const plan = planNetwork([...this.#view.links.values()], eff.config, eff.defaultDhcp);
    this.#plans = plan.plans;
    this.#ignored = plan.ignored;
    if (JSON.stringify(plan.problems) !== JSON.stringify(this.#problems)) for (const p of plan.problems) this.#o.log.warn(`${p.link}: ${p.message}`);
    this.#problems = plan.problems;
    // DHCP on links no longer planned (ignored, unconfigured, gone or recreated) stops first.
    const wanted = new Set(plan.plans.filter((p) => p.dhcp && this.#view.linkByName(p.name)).map((p) => p.name));
    for (const [name, h] of this.#dhcp) {
      const present = this.#view.links.get(h.linkIndex)?.name === name;
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
      if (await this.#view.relistAddressesAndRoutes(this.#rtnl!)) this.#requestReconcile();
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

  /** Makes one link match its plan, DHCP included; false when something failed (reported). */
  async #applyPlan(p: LinkPlan): Promise<boolean> {
    const status = this.#statusOf(p.name, p.source);
    status.source = p.source;
    const applied = await applyLinkPlan(
      { rtnl: this.#rtnl!, view: this.#view, log: this.#o.log, report: (name, message) => this.#report(name, message), virtualOptions: this.#virtualOptions, appliedAddresses: this.#appliedAddresses },
      p,
      status,
    );
    const link = applied.link;
    if (!link) return applied.ok;
    let ok = applied.ok;
    if (p.dhcp && !this.#dhcp.has(p.name)) {
      try {
        await this.#startDhcp(p, link);
      } catch (err) {
        ok = false;
        this.#report(p.name, `start DHCP: ${errText(err)}`);
      }
    }
    this.#leases.reapplyIfChanged(p, this.#dhcp.get(p.name));
    status.state = ok ? 'configured' : 'error';
    return ok;
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
        this.#leases.chain(name, h, () => this.#leases.apply(name, h, ev.lease, ev.previous));
        break;
      case 'expired':
      case 'released':
        if (h) h.lease = undefined;
        this.#o.log.info(`${name}: DHCP lease ${ev.lease.address} ${ev.type === 'released' ? 'released' : `ended (${ev.reason})`}`);
        if (h) this.#leases.chain(name, h, () => this.#leases.remove(name, h, ev.lease));
        else void this.#leases.remove(name, undefined, ev.lease);
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
    const settings = this.#settings();
    const ok = await this.#publisher.publish({
      links: this.#view.links,
      addresses: this.#view.addresses.values(),
      routes: this.#view.routes.values(),
      hostname: settings.hostname,
      resolvers: settings.resolvers,
      timeServers: settings.timeServers,
      ...(settings.config.extraHostEntries ? { extraHostEntries: settings.config.extraHostEntries } : {}),
    });
    if (!ok && !this.#stopped) {
      // Try again later (machined may be restarting).
      setTimeout(() => this.#scheduleSync(), this.#o.retryMs ?? 10_000).unref?.();
    }
  }
}
