// Making one link match its plan: create it (a VLAN, bond or bridge) when absent, set a bond's
// or bridge's options, enslave it, set its MTU and bring it up, and add the static addresses
// and routes (removing the addresses networkd added that the configuration dropped). DHCP is
// the manager's (manager.ts) once the link is there.
import type { Logger } from '../lib/log.ts';
import { familyOf, parseCidr } from '../lib/ip.ts';
import type { RouteConfig } from './config.ts';
import type { KernelView } from './kernel-view.ts';
import { type Link, RT_TABLE } from './netlink.ts';
import type { LinkPlan } from './plan.ts';
import { NetlinkError } from './rtnl.ts';
import { virtualLinkData } from './virtual-links.ts';
import type { InterfaceStatus, RtnlOps } from './types.ts';

export interface LinkApplyContext {
  rtnl: RtnlOps;
  view: KernelView;
  log: Logger;
  report(name: string, message: string): void;
  /** The options last set on each bond or bridge networkd configures. */
  virtualOptions: Map<string, string>;
  /** Static addresses networkd added, per link, to remove when the config drops them. */
  appliedAddresses: Map<string, Set<string>>;
}

/**
 * Applies the plan to its link. `link` is undefined when the link is not there (yet: waiting)
 * or could not be made (an error, reported); `ok` is false when a step failed (reported).
 * The status's state is set here only when there is no link to go on with.
 */
export async function applyLinkPlan(c: LinkApplyContext, p: LinkPlan, status: InterfaceStatus): Promise<{ ok: boolean; link?: Link }> {
  const { rtnl, view } = c;
  let link = view.linkByName(p.name);
  const create = async (what: string, make: () => Promise<void>): Promise<boolean> => {
    try {
      await make();
      c.log.info(`${p.name}: created ${what}`);
    } catch (err) {
      if (!isCode(err, 'EEXIST')) {
        status.state = 'error';
        c.report(p.name, errText(err));
        return false;
      }
    }
    link = (await rtnl.listLinks().catch(() => [])).find((l) => l.name === p.name);
    if (link) view.links.set(link.index, link);
    return true;
  };
  if (!link && p.vlan) {
    const vlan = p.vlan;
    const parent = view.linkByName(vlan.parent);
    if (!parent) {
      status.state = 'waiting';
      return { ok: true };
    }
    if (!(await create(`VLAN ${vlan.id} on ${vlan.parent}`, () => rtnl.createVlan({ name: p.name, parent: parent.index, id: vlan.id, ...(p.mtu ? { mtu: p.mtu } : {}) })))) return { ok: false };
  }
  if (!link && p.virtual) {
    const v = p.virtual;
    if (!(await create(v.kind, () => rtnl.createLink({ name: p.name, kind: v.kind, data: virtualLinkData(v), ...(v.mac ? { mac: v.mac } : {}), ...(p.mtu ? { mtu: p.mtu } : {}) })))) return { ok: false };
  }
  if (!link) {
    if (status.state !== 'waiting') c.log.info(`${p.name}: waiting for the link to appear`);
    status.state = 'waiting';
    return { ok: true };
  }
  let ok = true;
  const step = async (what: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      ok = false;
      c.report(p.name, `${what}: ${errText(err)}`);
    }
  };
  const index = link.index;
  if (p.virtual) {
    // The link may exist already: the bonding driver makes bond0 itself when built in, and a
    // previous configuration may have made it with other options. Its options are set once
    // per change, down (a bond changes mode only while down and without members).
    const v = p.virtual;
    const want = JSON.stringify(v.options);
    if (link.kind !== v.kind) {
      c.report(p.name, `a link ${p.name} of kind ${link.kind ?? 'hardware'} exists where a ${v.kind} is configured`);
      status.state = 'error';
      return { ok: false };
    }
    if (c.virtualOptions.get(p.name) !== want) {
      if (link.up) await step('set down to change its options', () => rtnl.setLinkUp(index, false));
      await step(`set ${v.kind} options`, () => rtnl.changeLinkInfo(index, v.kind, virtualLinkData(v)));
      if (ok) {
        c.virtualOptions.set(p.name, want);
        c.log.info(`${p.name}: ${v.kind} options ${want}`);
      }
      link = { ...link, up: false };
    }
  }
  if (p.master !== undefined) {
    const master = view.linkByName(p.master);
    if (!master) {
      status.state = 'waiting';
      return { ok: true };
    }
    if (link.master !== master.index) {
      // A bond takes only links that are down; a bridge takes them either way.
      if (link.up) await step('set down to enslave', () => rtnl.setLinkUp(index, false));
      await step(`enslave to ${p.master}`, () => rtnl.setMaster(index, master.index));
      if (ok) c.log.info(`${p.name}: member of ${p.master}`);
      link = { ...link, up: false, master: master.index };
    }
  }
  if (p.mtu !== undefined && link.mtu !== p.mtu) await step(`set MTU ${p.mtu}`, () => rtnl.setMtu(index, p.mtu!));
  if (p.up && !link.up) await step('set up', () => rtnl.setLinkUp(index, true));

  // Static addresses: add the missing, remove those networkd added and the config dropped.
  const have = new Set([...view.addresses.values()].filter((a) => a.index === index).map((a) => `${a.address}/${a.prefixLength}`));
  const want = new Set(p.addresses.map((a) => normalizeCidr(a)));
  const applied = c.appliedAddresses.get(p.name) ?? new Set<string>();
  for (const a of want) {
    if (!have.has(a)) await step(`add address ${a}`, () => rtnl.addAddress(index, { address: a, replace: true }));
    applied.add(a);
  }
  for (const a of [...applied]) {
    if (want.has(a)) continue;
    applied.delete(a);
    if (have.has(a)) await step(`remove address ${a}`, () => rtnl.deleteAddress(index, a).catch((e) => (isCode(e, 'EADDRNOTAVAIL') ? undefined : Promise.reject(e))));
  }
  c.appliedAddresses.set(p.name, applied);

  for (const r of p.routes) {
    if (hasRoute(view, r, index)) continue;
    await step(`add route ${r.network} via ${r.gateway ?? '-'}`, () => rtnl.addRoute(configRoute(r, index)));
  }
  return { ok, link };
}

function hasRoute(view: KernelView, r: RouteConfig, oif: number): boolean {
  const req = configRoute(r, oif);
  const dst = req.dst === 'default' ? (req.family === 'inet6' ? '::/0' : '0.0.0.0/0') : normalizeCidr(req.dst);
  for (const x of view.routes.values()) {
    if (x.table === RT_TABLE.MAIN && x.dst === dst && (x.gateway ?? undefined) === (req.gateway ?? undefined) && x.priority === (req.metric ?? 0) && x.oif === oif) return true;
  }
  return false;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isCode(err: unknown, ...codes: string[]): boolean {
  return err instanceof NetlinkError && codes.includes(err.code);
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
