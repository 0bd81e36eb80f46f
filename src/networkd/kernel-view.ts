// What the kernel has: links, addresses and routes, fed by one full listing and then by the
// rtnetlink subscription's events. Events that arrive during a listing are held and applied
// after it, so that a listing never undoes a newer event.
import type { Logger } from '../lib/log.ts';
import type { Address, Link, Route, RtnlEvent } from './netlink.ts';
import type { RtnlOps } from './types.ts';

const routeKey = (r: Route) => `${r.family}|${r.table}|${r.dst}|${r.gateway ?? ''}|${r.oif ?? ''}|${r.priority}`;
const addrKey = (a: Address) => `${a.index}|${a.address}/${a.prefixLength}`;
const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class KernelView {
  readonly links = new Map<number, Link>();
  readonly addresses = new Map<string, Address>();
  readonly routes = new Map<string, Route>();
  #listing = false;
  #held: RtnlEvent[] = [];

  constructor(private readonly log: Logger) {}

  /** An event from the subscription; true when the links changed so that the plan may (a link came, went or was renamed). */
  event(ev: RtnlEvent): { held: boolean; linksChanged: boolean } {
    if (this.#listing) {
      this.#held.push(ev);
      return { held: true, linksChanged: false };
    }
    return { held: false, linksChanged: this.#apply(ev) };
  }

  linkByName(name: string): Link | undefined {
    for (const l of this.links.values()) if (l.name === name) return l;
    return undefined;
  }

  /** Lists everything again (start, and after the kernel dropped events). True when events held meanwhile changed the links. */
  relist(rtnl: RtnlOps): Promise<boolean> {
    return this.#listed('links, addresses and routes', async () => {
      const [links, addresses, routes] = [await rtnl.listLinks(), await rtnl.listAddresses(), await rtnl.listRoutes({ table: 0 })];
      this.links.clear();
      for (const l of links) this.links.set(l.index, l);
      this.#replace(addresses, routes);
    });
  }

  /** Lists addresses and routes again (before applying plans: the event-fed view may lag behind). True as relist(). */
  relistAddressesAndRoutes(rtnl: RtnlOps): Promise<boolean> {
    return this.#listed('addresses and routes', async () => {
      const [addresses, routes] = [await rtnl.listAddresses(), await rtnl.listRoutes({ table: 0 })];
      this.#replace(addresses, routes);
    });
  }

  async #listed(what: string, list: () => Promise<void>): Promise<boolean> {
    let linksChanged = false;
    this.#listing = true;
    try {
      await list();
    } catch (err) {
      this.log.error(`listing ${what}: ${errText(err)}`);
    } finally {
      this.#listing = false;
      for (const ev of this.#held.splice(0)) if (this.#apply(ev)) linksChanged = true;
    }
    return linksChanged;
  }

  #replace(addresses: Address[], routes: Route[]): void {
    this.addresses.clear();
    this.routes.clear();
    for (const a of addresses) this.addresses.set(addrKey(a), a);
    for (const r of routes) this.routes.set(routeKey(r), r);
  }

  #apply(ev: RtnlEvent): boolean {
    switch (ev.kind) {
      case 'link': {
        const before = this.links.get(ev.link.index);
        if (ev.action === 'new') this.links.set(ev.link.index, ev.link);
        else {
          this.links.delete(ev.link.index);
          for (const [k, a] of this.addresses) if (a.index === ev.link.index) this.addresses.delete(k);
          for (const [k, r] of this.routes) if (r.oif === ev.link.index) this.routes.delete(k);
        }
        return ev.action === 'del' || !before || before.name !== ev.link.name;
      }
      case 'address':
        if (ev.action === 'new') this.addresses.set(addrKey(ev.address), ev.address);
        else this.addresses.delete(addrKey(ev.address));
        return false;
      case 'route':
        if (ev.action === 'new') this.routes.set(routeKey(ev.route), ev.route);
        else this.routes.delete(routeKey(ev.route));
        return false;
    }
  }
}
