// What networkd tells the rest of the node: its resources (links, addresses, routes, node
// addresses, resolvers, time servers, hostname), the kernel's hostname, and the files
// resolv.conf, hosts and hostname (written atomically). Only what changed since the last
// publication is sent or written; a failure is kept to be tried again.
import { writeFileAtomic } from '../lib/atomic.ts';
import type { Logger } from '../lib/log.ts';
import type { Publisher } from '../daemon/publisher.ts';
import { NETWORK_NAMESPACE } from '../contract/resources/hostname-status.ts';
import type { ExtraHostEntry } from './config.ts';
import type { Address, Link, Route } from './netlink.ts';
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

export interface NetworkPublisherOptions {
  publisher: Publisher;
  log: Logger;
  /** Change the node (hostname, files) at all; false on host runs. */
  manage: boolean;
  /** Where to write; null to not write. Defaults in NetworkManagerOptions. */
  resolvConfPath: string | null;
  hostsPath: string | null;
  hostnamePath: string | null;
  setHostname?: (name: string) => void;
  publishHostname: boolean;
  mayPublish?: (type: string) => boolean;
  linkInfo?: (name: string) => LinkSysInfo;
}

/** One publication's inputs: what the kernel has, and the settings as precedence chose them. */
export interface NetworkSnapshot {
  links: ReadonlyMap<number, Link>;
  addresses: Iterable<Address>;
  routes: Iterable<Route>;
  hostname: HostnameSpec;
  resolvers: ResolverSpec;
  timeServers: string[];
  extraHostEntries?: ExtraHostEntry[];
}

const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class NetworkPublisher {
  readonly #published = new Map<string, Map<string, string>>();
  readonly #written = new Map<string, string>();
  #hostnameSet = '';

  constructor(private readonly o: NetworkPublisherOptions) {}

  /** Publishes and writes what changed; false when something failed (to be tried again). */
  async publish(s: NetworkSnapshot): Promise<boolean> {
    const nameOf = (i: number | undefined) => (i === undefined ? '' : (s.links.get(i)?.name ?? ''));
    const links = new Map<string, unknown>();
    for (const l of s.links.values()) links.set(l.name, linkSpec(l, this.o.linkInfo?.(l.name)));
    const addresses = new Map<string, unknown>();
    const allAddresses = [...s.addresses];
    for (const a of allAddresses) {
      const n = nameOf(a.index);
      if (n) addresses.set(addressId(a, n), addressSpec(a, n));
    }
    const routes = new Map<string, unknown>();
    for (const r of s.routes) if (publishedRoute(r)) routes.set(routeId(r), routeSpec(r, nameOf(r.oif)));
    const current = nodeAddresses(allAddresses, s.links as Map<number, Link>);
    const nodeAddrs = new Map<string, unknown>([
      ['current', { addresses: current }],
      ['default', { addresses: current.slice(0, 1) }],
    ]);

    let ok = true;
    const publish = async (type: string, desired: Map<string, unknown>) => {
      if (this.o.mayPublish && !this.o.mayPublish(type)) return;
      if (!(await this.#publishType(type, desired))) ok = false;
    };
    await publish(RESOURCE_TYPES.link, links);
    await publish(RESOURCE_TYPES.address, addresses);
    await publish(RESOURCE_TYPES.route, routes);
    await publish(RESOURCE_TYPES.nodeAddress, nodeAddrs);
    await publish(RESOURCE_TYPES.resolver, new Map([['resolvers', s.resolvers]]));
    await publish(RESOURCE_TYPES.timeServer, new Map([['timeservers', { timeServers: s.timeServers }]]));
    if (this.o.publishHostname) await publish(RESOURCE_TYPES.hostname, new Map([['hostname', s.hostname]]));

    if (!this.o.manage) return ok;
    this.#setHostname(s.hostname.hostname);
    const files: Array<[string | null, string]> = [
      [this.o.resolvConfPath, renderResolvConf(s.resolvers)],
      [this.o.hostsPath, renderHosts(s.hostname, current[0]?.split('/')[0], s.extraHostEntries)],
      [this.o.hostnamePath, `${s.hostname.hostname}\n`],
    ];
    for (const [path, text] of files) {
      if (!path || this.#written.get(path) === text) continue;
      try {
        await writeFileAtomic(path, text, { mode: 0o644, dirMode: 0o755 });
        this.#written.set(path, text);
      } catch (err) {
        ok = false;
        this.o.log.warn(`write ${path}: ${errText(err)}`);
      }
    }
    return ok;
  }

  /** One type's resources made the desired ones: changed ones applied, gone ones destroyed. */
  async #publishType(type: string, desired: Map<string, unknown>): Promise<boolean> {
    let ok = true;
    const prev = this.#published.get(type) ?? new Map<string, string>();
    const next = new Map<string, string>();
    for (const [id, spec] of desired) {
      const json = JSON.stringify(spec);
      next.set(id, json);
      if (prev.get(id) === json) continue;
      try {
        await this.o.publisher.apply(NETWORK_NAMESPACE, type, id, spec);
      } catch (err) {
        ok = false;
        next.delete(id);
        this.o.log.warn(`publish ${type} ${id}: ${errText(err)}`);
      }
    }
    for (const id of prev.keys()) {
      if (desired.has(id)) continue;
      try {
        await this.o.publisher.destroy(NETWORK_NAMESPACE, type, id);
      } catch (err) {
        ok = false;
        next.set(id, prev.get(id)!);
        this.o.log.warn(`destroy ${type} ${id}: ${errText(err)}`);
      }
    }
    this.#published.set(type, next);
    return ok;
  }

  #setHostname(name: string): void {
    if (!this.o.setHostname || name === this.#hostnameSet) return;
    try {
      this.o.setHostname(name);
      this.#hostnameSet = name;
      this.o.log.info(`hostname ${name}`);
    } catch (err) {
      this.o.log.warn(`set hostname ${name}: ${errText(err)}`);
    }
  }
}
