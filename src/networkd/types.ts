// The shapes networkd's parts share: the rtnetlink operations they call (Rtnl has them; tests
// pass a fake) and what the manager reports of each interface.
import type { DhcpCounters, DhcpState } from './dhcp/client.ts';
import type { Address, Attr, Link, Route } from './netlink.ts';
import type { HostnameStatusSpec } from '../contract/resources/hostname-status.ts';
import type { ResolverStatusSpec } from '../contract/resources/resolver-status.ts';
import type { LinkRef, LinkSpec, Rtnl, RtnlCounters } from './rtnl.ts';

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
  hostname: HostnameStatusSpec;
  resolvers: ResolverStatusSpec;
  timeServers: string[];
}
