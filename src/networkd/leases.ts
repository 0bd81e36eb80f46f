// A DHCPv4 lease on a link: its address (with the lease's lifetime), its MTU and its routes
// added, and all of it removed when the lease ends, is released or moves to another address.
// Per link, lease changes are applied one after another (DhcpHandle.chain).
import type { DhcpClient, Lease } from './dhcp/client.ts';
import { INFINITE_LEASE } from './dhcp/client.ts';
import { RTPROT } from './netlink.ts';
import { DEFAULT_ROUTE_METRIC, type LinkPlan } from './plan.ts';
import { leaseRoutes } from './precedence.ts';
import { NetlinkError } from './rtnl.ts';
import type { RtnlOps } from './types.ts';

export interface DhcpHandle {
  client: DhcpClient;
  linkIndex: number;
  lease?: Lease;
  /** How the lease's routes were added: their metric, or none (DHCPv4Config ignoreRoutes). */
  routes?: { metric: number; ignored: boolean };
  /** Lease application, serialized per link. */
  chain: Promise<void>;
}

/** What applying a lease needs from networkd. */
export interface LeaseContext {
  rtnl(): RtnlOps;
  /** Change links at all (false on host runs). */
  manage: boolean;
  stopped(): boolean;
  plan(name: string): LinkPlan | undefined;
  linkIndex(name: string): number | undefined;
  linkMtu(index: number): number | undefined;
  report(name: string, message: string): void;
  now(): number;
}

const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));
const isCode = (err: unknown, ...codes: string[]) => err instanceof NetlinkError && codes.includes(err.code);

export class Leases {
  constructor(private readonly c: LeaseContext) {}

  /** Runs fn after the link's earlier lease changes; its failure is reported for the link. */
  chain(name: string, h: DhcpHandle, fn: () => Promise<void>): void {
    h.chain = h.chain.then(fn).catch((err) => this.c.report(name, errText(err)));
  }

  async apply(name: string, h: DhcpHandle, lease: Lease, previous?: Lease): Promise<void> {
    if (!this.c.manage || this.c.stopped()) return;
    const rtnl = this.c.rtnl();
    const plan = this.c.plan(name);
    const metric = plan?.routeMetric ?? DEFAULT_ROUTE_METRIC;
    const index = h.linkIndex;
    const cidr = `${lease.address}/${lease.prefixLength}`;
    if (previous && (previous.address !== lease.address || previous.prefixLength !== lease.prefixLength)) {
      await this.remove(name, undefined, previous);
    }
    const life: { validLifetime?: number; preferredLifetime?: number } = {};
    if (lease.leaseTime !== INFINITE_LEASE) {
      const left = Math.max(1, Math.round(lease.leaseTime - (this.c.now() - lease.obtainedAt) / 1000));
      life.validLifetime = left;
      life.preferredLifetime = left;
    }
    try {
      await rtnl.addAddress(index, { address: cidr, ...life, replace: true });
    } catch (err) {
      this.c.report(name, `DHCP address ${cidr}: ${errText(err)}`);
      return;
    }
    const mtu = lease.options.mtu;
    if (mtu && mtu >= 68 && plan?.mtu === undefined && this.c.linkMtu(index) !== mtu) {
      await rtnl.setMtu(index, mtu).catch((err) => this.c.report(name, `DHCP MTU ${mtu}: ${errText(err)}`));
    }
    for (const r of plan?.ignoreDhcpRoutes ? [] : leaseRoutes(lease)) {
      await rtnl
        .addRoute({ dst: r.dst, ...(r.gateway ? { gateway: r.gateway } : {}), link: index, metric, protocol: RTPROT.DHCP, ...(r.scope !== undefined ? { scope: r.scope } : {}), prefsrc: lease.address, replace: true })
        .catch((err) => this.c.report(name, `DHCP route ${r.dst}${r.gateway ? ` via ${r.gateway}` : ''}: ${errText(err)}`));
    }
    h.routes = { metric, ignored: !!plan?.ignoreDhcpRoutes };
  }

  /** A lease's routes as they were added (their metric), removed. */
  async removeRoutes(name: string, index: number, lease: Lease, metric: number): Promise<void> {
    for (const r of leaseRoutes(lease).reverse()) {
      await this.c
        .rtnl()
        .deleteRoute({ dst: r.dst, ...(r.gateway ? { gateway: r.gateway } : {}), link: index, metric })
        .catch((err) => (isCode(err, 'ESRCH', 'ENODEV') ? undefined : this.c.report(name, `DHCP route ${r.dst}: ${errText(err)}`)));
    }
  }

  async remove(name: string, h: DhcpHandle | undefined, lease: Lease): Promise<void> {
    if (!this.c.manage) return;
    const index = h?.linkIndex ?? this.c.linkIndex(name);
    if (index === undefined) return;
    const plan = this.c.plan(name);
    if (!h?.routes?.ignored) await this.removeRoutes(name, index, lease, h?.routes?.metric ?? plan?.routeMetric ?? DEFAULT_ROUTE_METRIC);
    await this.c
      .rtnl()
      .deleteAddress(index, `${lease.address}/${lease.prefixLength}`)
      .catch((err) => (isCode(err, 'EADDRNOTAVAIL', 'ENODEV') ? undefined : this.c.report(name, `DHCP address: ${errText(err)}`)));
  }

  /** A lease taken under other settings (the route metric, ignoreRoutes): its routes again. */
  reapplyIfChanged(p: LinkPlan, h: DhcpHandle | undefined): void {
    if (!h?.lease || !h.routes || (h.routes.metric === p.routeMetric && h.routes.ignored === !!p.ignoreDhcpRoutes)) return;
    const { lease, routes } = h;
    this.chain(p.name, h, async () => {
      if (!routes.ignored) await this.removeRoutes(p.name, h.linkIndex, lease, routes.metric);
      await this.apply(p.name, h, lease);
    });
  }
}
