// What machined needs from the machine configuration to give the node its API identity:
// machine type, OS CA, join token, extra certificate names, the control-plane endpoint. The
// schema itself is checked before (src/config/validate.ts); these are the node's own needs,
// read through the configuration's accessors (config/accessors/cluster.ts).
import { validated } from './parsed.ts';
import { fromBase64Pem } from '../../pki/pem.ts';
import { machineCredentials } from '../../config/accessors/cluster.ts';

export interface NodeIdentity {
  type: 'controlplane' | 'worker';
  /** OS CA, PEM; the key only on control-plane nodes. */
  ca: { crt: string; key?: string };
  token: string;
  certSANs: string[];
  /** Host of cluster.controlPlane.endpoint: where workers find trustd. */
  controlPlaneHost?: string;
  clusterName?: string;
}

export class ConfigError extends Error {}

function str(v: unknown, path: string, required: boolean): string | undefined {
  if (v === undefined || v === null || v === '') {
    if (required) throw new ConfigError(`${path}: required`);
    return undefined;
  }
  if (typeof v !== 'string') throw new ConfigError(`${path}: must be a string`);
  return v;
}

function pem(v: unknown, path: string, required: boolean): string | undefined {
  const b64 = str(v, path, required);
  if (b64 === undefined) return undefined;
  try {
    return fromBase64Pem(b64);
  } catch (err) {
    throw new ConfigError(`${path}: ${(err as Error).message}`);
  }
}

/**
 * The node's identity from a configuration, read as the validator reads it: machine.type ("join"
 * and a missing type are workers), the OS CA, the join token, and the control-plane endpoint from
 * cluster.controlPlane.endpoint or a KubeClusterConfig document (Talos 1.14+).
 */
export function nodeIdentity(configText: string): NodeIdentity {
  const r = validated(configText);
  if (!r.ok) throw new ConfigError(`invalid configuration: ${r.errors.map((e) => `${e.path || `line ${e.line}`}: ${e.message}`).join('; ')}`);
  const { config } = r;
  const doc = machineCredentials(config);
  if (!doc) throw new ConfigError('no v1alpha1 document: the node needs machine.type, machine.token and machine.ca to leave maintenance mode');
  const type = config.machineType;
  if (type !== 'controlplane' && type !== 'worker') throw new ConfigError(`machine.type: must be controlplane or worker, not ${String(type)}`);
  const ca = { crt: pem(doc.ca?.crt, 'machine.ca.crt', true)!, key: pem(doc.ca?.key, 'machine.ca.key', type === 'controlplane') };
  const sans: unknown = doc.certSANs ?? [];
  if (!Array.isArray(sans) || sans.some((s) => typeof s !== 'string')) throw new ConfigError('machine.certSANs: must be a list of strings');
  const endpoint = config.controlPlaneEndpoint;
  let controlPlaneHost: string | undefined;
  if (endpoint) {
    try {
      controlPlaneHost = new URL(endpoint).hostname.replace(/^\[|\]$/g, '');
    } catch {
      throw new ConfigError(`cluster.controlPlane.endpoint: not a URL: ${endpoint}`);
    }
  }
  if (type === 'worker' && !controlPlaneHost) throw new ConfigError('cluster.controlPlane.endpoint: required on workers (where to find trustd)');
  return { type, ca, token: str(doc.token, 'machine.token', true)!, certSANs: sans as string[], controlPlaneHost, clusterName: config.clusterName };
}
