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
import type { HostnameStatusSpec } from '../contract/resources/hostname-status.ts';
import type { ResolverStatusSpec } from '../contract/resources/resolver-status.ts';
import {
  type LinkSysInfo,
  RESOURCE_TYPES,
  addressId,
  addressStatusSpec,
  linkStatusSpec,
  nodeAddresses,
  publishedRoute,
  renderHosts,
  renderResolvConf,
  routeId,
  routeStatusSpec,
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
  hostname: HostnameStatusSpec;
  resolvers: ResolverStatusSpec;
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
    for (const l of s.links.values()) links.set(l.name, linkStatusSpec(l, this.o.linkInfo?.(l.name)));
    const addresses = new Map<string, unknown>();
    const allAddresses = [...s.addresses];
    for (const a of allAddresses) {
      const n = nameOf(a.index);
      if (n) addresses.set(addressId(a, n), addressStatusSpec(a, n));
    }
    const routes = new Map<string, unknown>();
    for (const r of s.routes) if (publishedRoute(r)) routes.set(routeId(r), routeStatusSpec(r, nameOf(r.oif)));
    const current = nodeAddresses(allAddresses, s.links as Map<number, Link>);
    const nodeAddrs = new Map<string, unknown>([
      ['current', { addresses: current }],
      ['default', { addresses: current.slice(0, 1) }],
    ]);

    // Every resource is written at once: over machined's socket each write is a read and a
    // write, and one after the other they took 15-30 s at boot under TCG (machined busy starting
    // services), which delayed the first publication and so the configuration's application.
    const types: Array<[string, Map<string, unknown>]> = [
      [RESOURCE_TYPES.link, links],
      [RESOURCE_TYPES.address, addresses],
      [RESOURCE_TYPES.route, routes],
      [RESOURCE_TYPES.nodeAddress, nodeAddrs],
      [RESOURCE_TYPES.resolver, new Map([['resolvers', s.resolvers]])],
      [RESOURCE_TYPES.timeServer, new Map([['timeservers', { timeServers: s.timeServers }]])],
      ...(this.o.publishHostname ? [[RESOURCE_TYPES.hostname, new Map([['hostname', s.hostname]])] as [string, Map<string, unknown>]] : []),
    ];
    const results = await Promise.all(types.filter(([type]) => !this.o.mayPublish || this.o.mayPublish(type)).map(([type, desired]) => this.#publishType(type, desired)));
    let ok = results.every(Boolean);

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
    const prev = this.#published.get(type) ?? new Map<string, string>();
    const next = new Map<string, string>();
    const writes: Array<Promise<boolean>> = [];
    for (const [id, spec] of desired) {
      const json = JSON.stringify(spec);
      next.set(id, json);
      if (prev.get(id) === json) continue;
      writes.push(
        this.o.publisher.apply(NETWORK_NAMESPACE, type, id, spec).then(
          () => true,
          (err) => {
            next.delete(id);
            this.o.log.warn(`publish ${type} ${id}: ${errText(err)}`);
            return false;
          },
        ),
      );
    }
    for (const id of prev.keys()) {
      if (desired.has(id)) continue;
      writes.push(
        this.o.publisher.destroy(NETWORK_NAMESPACE, type, id).then(
          () => true,
          (err) => {
            next.set(id, prev.get(id)!);
            this.o.log.warn(`destroy ${type} ${id}: ${errText(err)}`);
            return false;
          },
        ),
      );
    }
    const ok = (await Promise.all(writes)).every(Boolean);
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
