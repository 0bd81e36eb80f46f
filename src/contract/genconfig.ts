// `gen config`: the control plane and worker machine configs of a cluster, generated from its secrets
// bundle, in Talos's v1alpha1 format for the parts Bronze implements. The worker's config carries
// the OS CA certificate but not its key (an empty string, as Talos writes it).
import { isIP } from 'node:net';
import YAML from 'yaml';
import { toBase64Pem } from '../pki/pem.ts';
import type { SecretsBundle } from './secrets.ts';

export const DEFAULT_ENDPOINT_PORT = 6443;

export interface GenerateConfigsOptions {
  clusterName: string;
  /** The control plane endpoint: `https://host:port`, `host:port` or a bare host (port 6443). */
  endpoint: string;
  /** Extra names and addresses for the nodes' API certificates (machine.certSANs). */
  additionalSANs?: string[];
  secrets: SecretsBundle;
  /** machine.install.disk / machine.install.image; left out when not given. */
  installDisk?: string;
  installImage?: string;
}

export interface GeneratedConfigs {
  controlplane: string;
  worker: string;
}

/**
 * Normalises a control plane endpoint to `https://host:port`: adds the scheme and the default port
 * when missing, brackets a bare IPv6 address; rejects other schemes, paths, queries and credentials.
 */
export function normaliseEndpoint(endpoint: string): string {
  const s = endpoint.trim();
  if (!s) throw new Error('endpoint: empty');
  let withScheme: string;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(s);
  if (scheme) {
    if (scheme[1]!.toLowerCase() !== 'https') throw new Error(`endpoint: scheme must be https, got ${scheme[1]}`);
    withScheme = s;
  } else {
    withScheme = `https://${isIP(s) === 6 ? `[${s}]` : s}`;
  }
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`endpoint: ${JSON.stringify(endpoint)} is not a host, host:port or https URL`);
  }
  if (url.username || url.password) throw new Error('endpoint: must not carry credentials');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    throw new Error('endpoint: must not have a path, query or fragment');
  }
  if (!url.hostname) throw new Error('endpoint: missing host');
  // URL drops a default port (":443"), so read an explicit port from the text itself.
  const authority = withScheme.slice(withScheme.indexOf('//') + 2).split(/[/?#]/)[0]!;
  const afterHost = authority.replace(/^.*@/, '').replace(/^\[[^\]]*\]/, '').replace(/^[^:]*/, '');
  const explicit = /^:(\d+)$/.exec(afterHost);
  if (afterHost !== '' && !explicit) throw new Error(`endpoint: invalid port in ${JSON.stringify(endpoint)}`);
  const port = explicit ? Number(explicit[1]) : DEFAULT_ENDPOINT_PORT;
  if (!(port >= 1 && port <= 65535)) throw new Error(`endpoint: port ${port} out of range`);
  return `https://${url.hostname}:${port}`;
}

function uniqueSANs(sans: string[]): string[] {
  const out: string[] = [];
  for (const raw of sans) {
    const s = raw.trim();
    if (!s || /\s/.test(s)) throw new Error(`additionalSANs: invalid name ${JSON.stringify(raw)}`);
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

function machineConfig(type: 'controlplane' | 'worker', opts: GenerateConfigsOptions, endpoint: string, sans: string[]): object {
  const s = opts.secrets;
  const install: Record<string, string> = {};
  if (opts.installDisk) install.disk = opts.installDisk;
  if (opts.installImage) install.image = opts.installImage;
  const cluster: Record<string, unknown> = {
    id: s.cluster.id,
    secret: s.cluster.secret,
    clusterName: opts.clusterName,
    controlPlane: { endpoint },
  };
  if (s.secrets.bootstraptoken) cluster.token = s.secrets.bootstraptoken;
  // The etcd CA (as Talos's cluster.etcd.ca): control planes only, which run etcd.
  if (type === 'controlplane' && s.certs.etcd) cluster.etcd = { ca: { crt: toBase64Pem(s.certs.etcd.crt), key: toBase64Pem(s.certs.etcd.key) } };
  return {
    version: 'v1alpha1',
    debug: false,
    machine: {
      type,
      token: s.trustdinfo.token,
      ca: {
        crt: toBase64Pem(s.certs.os.crt),
        key: type === 'controlplane' ? toBase64Pem(s.certs.os.key) : '',
      },
      certSANs: sans,
      network: {},
      install,
      time: {},
    },
    cluster,
  };
}

export function generateConfigs(opts: GenerateConfigsOptions): GeneratedConfigs {
  const name = opts.clusterName.trim();
  if (!name || /[\s\p{Cc}]/u.test(name)) throw new Error(`clusterName: invalid ${JSON.stringify(opts.clusterName)}`);
  const endpoint = normaliseEndpoint(opts.endpoint);
  const sans = uniqueSANs(opts.additionalSANs ?? []);
  const o = { ...opts, clusterName: name };
  const dump = (v: object) => YAML.stringify(v, { lineWidth: 0 });
  return {
    controlplane: dump(machineConfig('controlplane', o, endpoint, sans)),
    worker: dump(machineConfig('worker', o, endpoint, sans)),
  };
}
