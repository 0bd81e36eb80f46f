// etcd's settings (Talos: Cluster().Etcd()): cluster.etcd's CA (base64 PEM, as Talos's secrets
// put it there), extraArgs (less those Bronze sets itself) and the subnets that choose its
// addresses. machined's alone (the reserved arguments' list lives beside the schema).
import { ETCD_RESERVED_ARGS } from '../fields.ts';
import type { TypedConfig } from './typed.ts';

export interface EtcdConfigSettings {
  /** base64 PEM; both halves, or none. */
  ca?: { crt: string; key: string };
  extraArgs: Record<string, string>;
  advertisedSubnets: string[];
  listenSubnets: string[];
}

export function etcd(c: TypedConfig | undefined): EtcdConfigSettings {
  const e = c?.v1alpha1?.cluster?.etcd;
  const extraArgs: Record<string, string> = {};
  for (const [k, v] of Object.entries(e?.extraArgs ?? {})) {
    if (!(ETCD_RESERVED_ARGS as readonly string[]).includes(k)) extraArgs[k] = v;
  }
  return {
    ...(e?.ca?.crt && e.ca.key ? { ca: { crt: e.ca.crt, key: e.ca.key } } : {}),
    extraArgs,
    advertisedSubnets: [...(e?.advertisedSubnets ?? [])],
    listenSubnets: [...(e?.listenSubnets ?? [])],
  };
}
