// What the etcd service reads from the machine configuration: the etcd CA (cluster.etcd.ca, as
// Talos's secrets put it there), extraArgs and the subnets that choose its addresses, as the
// configuration's accessors resolve them (config/accessors/etcd.ts, cluster.ts).
import { validated } from '../config/parsed.ts';
import { fromBase64Pem } from '../../pki/pem.ts';
import type { CertAndKey } from '../../pki/ca.ts';
import { machineCredentials } from '../../config/accessors/cluster.ts';
import { etcd as etcdConfig } from '../../config/accessors/etcd.ts';

export interface EtcdSettings {
  ca?: CertAndKey;
  extraArgs: Record<string, string>;
  advertisedSubnets: string[];
  listenSubnets: string[];
}

/** The etcd settings of a configuration (undefined: no v1alpha1 document, or not valid). */
export function etcdSettings(configText: string | undefined): EtcdSettings | undefined {
  if (!configText) return undefined;
  const r = validated(configText);
  if (!r.ok) return undefined;
  const { ca: b64, extraArgs, advertisedSubnets, listenSubnets } = etcdConfig(r.config);
  let ca: CertAndKey | undefined;
  if (b64) ca = { crt: fromBase64Pem(b64.crt), key: fromBase64Pem(b64.key) };
  return { ca, extraArgs, advertisedSubnets, listenSubnets };
}

/** What the cluster parts of machined read of the running configuration. */
export interface ClusterSettings {
  /** 'controlplane' or 'worker' (undefined: no v1alpha1 document). */
  machineType?: string;
  /** The host of cluster.controlPlane.endpoint. */
  controlPlaneHost?: string;
  etcd?: EtcdSettings;
  /** machine.token and the OS CA's certificate (PEM): how a worker says Hello to trustd. */
  token?: string;
  osCaCrt?: string;
}

/** The host of an endpoint URL (https://host:port), or the text itself when it is not a URL. */
export function endpointHost(endpoint: string | undefined): string | undefined {
  if (!endpoint) return undefined;
  try {
    return new URL(endpoint).hostname.replace(/^\[|\]$/g, '') || undefined;
  } catch {
    return endpoint;
  }
}

/** Reads a configuration once per text (validation is not free, and these are read often). */
export function clusterSettingsReader(configText: () => string | undefined): () => ClusterSettings {
  let last: { text: string | undefined; settings: ClusterSettings } | undefined;
  return () => {
    const text = configText();
    if (last && last.text === text) return last.settings;
    let settings: ClusterSettings = {};
    if (text) {
      const r = validated(text);
      if (r.ok) {
        const machine = machineCredentials(r.config);
        settings = {
          machineType: r.config.machineType,
          controlPlaneHost: endpointHost(r.config.controlPlaneEndpoint),
          etcd: etcdSettings(text),
          ...(machine?.token ? { token: machine.token } : {}),
          ...(machine?.ca?.crt ? { osCaCrt: fromBase64Pem(machine.ca.crt) } : {}),
        };
      }
    }
    last = { text, settings };
    return settings;
  };
}
