// Bonds and bridges networkd creates (Talos's BondConfig and BridgeConfig): the options as the
// configuration names them, and their IFLA_INFO_DATA attributes for the kernel's bonding and
// bridge drivers (linux/if_link.h).
import { attr, type Attr } from './netlink.ts';

/** IFLA_BOND_*: the bonding driver's netlink attributes. */
export const IFLA_BOND = {
  MODE: 1,
  MIIMON: 3,
  UPDELAY: 4,
  DOWNDELAY: 5,
  USE_CARRIER: 6,
  ARP_INTERVAL: 7,
  ARP_VALIDATE: 9,
  ARP_ALL_TARGETS: 10,
  PRIMARY_RESELECT: 12,
  FAIL_OVER_MAC: 13,
  XMIT_HASH_POLICY: 14,
  RESEND_IGMP: 15,
  NUM_PEER_NOTIF: 16,
  ALL_SLAVES_ACTIVE: 17,
  MIN_LINKS: 18,
  LP_INTERVAL: 19,
  PACKETS_PER_SLAVE: 20,
  AD_LACP_RATE: 21,
  AD_SELECT: 22,
  AD_ACTOR_SYS_PRIO: 24,
  AD_USER_PORT_KEY: 25,
  TLB_DYNAMIC_LB: 27,
  PEER_NOTIF_DELAY: 28,
  AD_LACP_ACTIVE: 29,
  MISSED_MAX: 30,
} as const;

/** IFLA_BR_*: the bridge's netlink attributes. */
export const IFLA_BR = { STP_STATE: 5, VLAN_FILTERING: 7 } as const;

export interface VirtualLink {
  kind: 'bond' | 'bridge';
  /** Options by their configuration name (BondConfig's bondMode, miimon, ...; BridgeConfig's stp, vlanFiltering). */
  options: Record<string, string | number | boolean>;
  /** Hardware address to give the link. */
  mac?: string;
}

const index = (values: readonly string[]) => (v: unknown) => {
  const i = values.indexOf(String(v));
  if (i < 0) throw new Error(`${String(v)} is not one of ${values.join(', ')}`);
  return i;
};

type Width = 'u8' | 'u16' | 'u32';

/** BondConfig option → [attribute, width, value encoding]. */
const BOND_OPTIONS: Record<string, [number, Width, (v: unknown) => number]> = {
  bondMode: [IFLA_BOND.MODE, 'u8', index(['balance-rr', 'active-backup', 'balance-xor', 'broadcast', '802.3ad', 'balance-tlb', 'balance-alb'])],
  miimon: [IFLA_BOND.MIIMON, 'u32', Number],
  updelay: [IFLA_BOND.UPDELAY, 'u32', Number],
  downdelay: [IFLA_BOND.DOWNDELAY, 'u32', Number],
  useCarrier: [IFLA_BOND.USE_CARRIER, 'u8', (v) => (v ? 1 : 0)],
  arpInterval: [IFLA_BOND.ARP_INTERVAL, 'u32', Number],
  arpValidate: [IFLA_BOND.ARP_VALIDATE, 'u32', index(['none', 'active', 'backup', 'all', 'filter', 'filter-active', 'filter-backup'])],
  arpAllTargets: [IFLA_BOND.ARP_ALL_TARGETS, 'u32', index(['any', 'all'])],
  primaryReselect: [IFLA_BOND.PRIMARY_RESELECT, 'u8', index(['always', 'better', 'failure'])],
  failOverMac: [IFLA_BOND.FAIL_OVER_MAC, 'u8', index(['none', 'active', 'follow'])],
  xmitHashPolicy: [IFLA_BOND.XMIT_HASH_POLICY, 'u8', index(['layer2', 'layer3+4', 'layer2+3', 'encap2+3', 'encap3+4'])],
  resendIGMP: [IFLA_BOND.RESEND_IGMP, 'u32', Number],
  numPeerNotif: [IFLA_BOND.NUM_PEER_NOTIF, 'u8', Number],
  allSlavesActive: [IFLA_BOND.ALL_SLAVES_ACTIVE, 'u8', Number],
  minLinks: [IFLA_BOND.MIN_LINKS, 'u32', Number],
  lpInterval: [IFLA_BOND.LP_INTERVAL, 'u32', Number],
  packetsPerSlave: [IFLA_BOND.PACKETS_PER_SLAVE, 'u32', Number],
  lacpRate: [IFLA_BOND.AD_LACP_RATE, 'u8', index(['slow', 'fast'])],
  adSelect: [IFLA_BOND.AD_SELECT, 'u8', index(['stable', 'bandwidth', 'count'])],
  adActorSysPrio: [IFLA_BOND.AD_ACTOR_SYS_PRIO, 'u16', Number],
  adUserPortKey: [IFLA_BOND.AD_USER_PORT_KEY, 'u16', Number],
  tlbLogicalLb: [IFLA_BOND.TLB_DYNAMIC_LB, 'u8', Number],
  peerNotifDelay: [IFLA_BOND.PEER_NOTIF_DELAY, 'u32', Number],
  adLACPActive: [IFLA_BOND.AD_LACP_ACTIVE, 'u8', index(['off', 'on'])],
  missedMax: [IFLA_BOND.MISSED_MAX, 'u8', Number],
};

const BRIDGE_OPTIONS: Record<string, [number, Width, (v: unknown) => number]> = {
  stp: [IFLA_BR.STP_STATE, 'u32', (v) => (v ? 1 : 0)],
  vlanFiltering: [IFLA_BR.VLAN_FILTERING, 'u8', (v) => (v ? 1 : 0)],
};

/** The IFLA_INFO_DATA of a bond or bridge; throws naming an option it cannot encode. */
export function virtualLinkData(v: VirtualLink): Attr[] {
  const table = v.kind === 'bond' ? BOND_OPTIONS : BRIDGE_OPTIONS;
  const out: Attr[] = [];
  for (const [name, value] of Object.entries(v.options)) {
    const o = table[name];
    if (!o) throw new Error(`${v.kind} option ${name} is not supported`);
    const [type, width, encode] = o;
    let n: number;
    try {
      n = encode(value);
    } catch (err) {
      throw new Error(`${v.kind} option ${name}: ${(err as Error).message}`);
    }
    out.push(attr[width](type, n));
  }
  return out;
}

const BOND_FIELDS = Object.keys(BOND_OPTIONS);

/** The bond options of a BondConfig document (its other fields are the link's own). */
export function bondOptions(doc: Record<string, unknown>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const k of BOND_FIELDS) {
    const v = doc[k];
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  }
  return out;
}

/** The bridge options of a BridgeConfig document. */
export function bridgeOptions(doc: { stp?: { enabled?: boolean }; vlan?: { filtering?: boolean } }): Record<string, boolean> {
  return {
    ...(doc.stp?.enabled !== undefined ? { stp: doc.stp.enabled } : {}),
    ...(doc.vlan?.filtering !== undefined ? { vlanFiltering: doc.vlan.filtering } : {}),
  };
}
