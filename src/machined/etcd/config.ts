// What the etcd service reads from the machine configuration: the etcd CA (cluster.etcd.ca, as
// Talos's secrets put it there), extraArgs and the subnets that choose its addresses.
import { validateConfig } from '../../config/validate.ts';
import { fromBase64Pem } from '../../pki/pem.ts';
import type { CertAndKey } from '../../pki/ca.ts';
import { ETCD_RESERVED_ARGS } from '../../config/fields.ts';

export interface EtcdSettings {
  ca?: CertAndKey;
  extraArgs: Record<string, string>;
  advertisedSubnets: string[];
  listenSubnets: string[];
}

/** The etcd settings of a configuration (undefined: no v1alpha1 document, or not valid). */
export function etcdSettings(configText: string | undefined): EtcdSettings | undefined {
  if (!configText) return undefined;
  const r = validateConfig(configText);
  if (!r.ok) return undefined;
  const etcd = (r.config.data.v1alpha1 as { cluster?: { etcd?: Record<string, any> } } | undefined)?.cluster?.etcd ?? {};
  let ca: CertAndKey | undefined;
  if (etcd.ca?.crt && etcd.ca?.key) ca = { crt: fromBase64Pem(String(etcd.ca.crt)), key: fromBase64Pem(String(etcd.ca.key)) };
  const extraArgs: Record<string, string> = {};
  for (const [k, v] of Object.entries((etcd.extraArgs ?? {}) as Record<string, unknown>)) {
    if (!(ETCD_RESERVED_ARGS as readonly string[]).includes(k)) extraArgs[k] = String(v);
  }
  return { ca, extraArgs, advertisedSubnets: (etcd.advertisedSubnets ?? []).map(String), listenSubnets: (etcd.listenSubnets ?? []).map(String) };
}
