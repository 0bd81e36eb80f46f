// What a worker may put in the cluster registry through trustd (bronze.cluster.Registry/Hello,
// authenticated by the join token and the API certificate trustd issued it): a record of
// itself, bounded. trustd checks it before relaying, and machined checks it again before it
// writes to etcd (trustd is only a relay). The node id is never the caller's to choose: trustd
// derives it from the caller's certificate (WORKER_ID_PATTERN).
import { bytesToIp, ipToBytes } from '../lib/ip.ts';

/**
 * The common name of a control plane's recovery certificate (kept in META, unencrypted: see
 * src/machined/recovery.ts) starts with this, so that it can be told from apid's live
 * certificate: trustd's Hello, which takes an API server certificate as a worker's identity,
 * refuses it, so a copy read off a disk cannot register a worker.
 */
export const RECOVERY_CN_PREFIX = 'recovery@';

export const REGISTRY_LIMITS = {
  /** Nodes refresh every 10 s and ask for 3x that; a little above it, and no more. */
  maxTtlSeconds: 40,
  /** Shorter leases are raised to this (etcd's minimum lease is about 5 s anyway). */
  minTtlSeconds: 5,
  /** What ttl_seconds 0 (unset) means. */
  defaultTtlSeconds: 30,
  maxAddresses: 16,
  maxHostnameLength: 253,
  maxOperatingSystemLength: 128,
  /** The record as stored (JSON), in bytes (Talos's discovery service: AffiliateDataMax, 2048). */
  maxRecordBytes: 2048,
  /** Worker records at most; new ones are refused past it, RESOURCE_EXHAUSTED (discovery service: ClusterAffiliatesMax, 1024). */
  maxWorkers: 1024,
} as const;

export type RegistryLimits = { -readonly [K in keyof typeof REGISTRY_LIMITS]: number };

/** "w-" and 128 bits of the SHA-256 of the worker certificate's public key, in hex. */
export const WORKER_ID_PATTERN = /^w-[0-9a-f]{32}$/;

/** Why a Hello was refused: 'invalid' (INVALID_ARGUMENT) or 'denied' (PERMISSION_DENIED). */
export class RegistryRefusal extends Error {
  override name = 'RegistryRefusal';
  constructor(
    readonly kind: 'invalid' | 'denied',
    message: string,
  ) {
    super(message);
  }
}

/** A worker's record as the registry stores it (the MemberSpec of a worker). */
export interface WorkerRecord {
  nodeId: string;
  addresses: string[];
  hostname: string;
  machineType: 'worker';
  operatingSystem: string;
}

const LABEL = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;

function hostnameError(h: string, max: number): string | undefined {
  if (!h) return 'hostname is required';
  if (h.length > max) return `hostname is ${h.length} characters long; at most ${max}`;
  if (!h.split('.').every((l) => LABEL.test(l))) return `hostname ${JSON.stringify(h.slice(0, 64))} is not a valid host name (labels of 1-63 letters, digits, "-" or "_", separated by ".")`;
  return undefined;
}

/** The machine types a token caller may claim: unset (Talos's TYPE_UNKNOWN) or worker. */
function claimsWorker(t: unknown): boolean {
  return t === undefined || t === null || t === 0 || t === 3 || t === 'TYPE_UNKNOWN' || t === 'TYPE_WORKER' || t === 'worker' || t === 'unknown' || t === '';
}

/** The lease a Hello asks for, bounded; throws a RegistryRefusal for one over the limit. */
export function workerTtlSeconds(raw: unknown, limits: RegistryLimits = REGISTRY_LIMITS): number {
  const ttl = raw === undefined || raw === null || raw === '' ? 0 : Number(raw);
  if (!Number.isInteger(ttl) || ttl < 0) throw new RegistryRefusal('invalid', `ttl_seconds ${String(raw).slice(0, 32)} is not a whole number of seconds >= 0`);
  if (ttl > limits.maxTtlSeconds) throw new RegistryRefusal('invalid', `ttl_seconds ${String(raw).slice(0, 32)} is over the limit of ${limits.maxTtlSeconds} s`);
  return ttl === 0 ? limits.defaultTtlSeconds : Math.max(limits.minTtlSeconds, ttl);
}

/**
 * The record a worker's Hello may write, checked against the limits: `member` is the wire form
 * (talos.resource.definitions.cluster.MemberSpec as grpc-js decodes it, or the stored JSON's
 * fields), `nodeId` the id derived from the caller's certificate. A node_id in the request other
 * than that one, a machine type other than worker, or anything over a limit is refused.
 */
export function workerRecord(member: unknown, nodeId: string, limits: RegistryLimits = REGISTRY_LIMITS): WorkerRecord {
  if (!WORKER_ID_PATTERN.test(nodeId)) throw new RegistryRefusal('invalid', `node id ${JSON.stringify(nodeId.slice(0, 64))} is not a worker id (w- and 32 hex digits, from the caller's certificate)`);
  if (typeof member !== 'object' || member === null) throw new RegistryRefusal('invalid', 'member is required');
  const m = member as Record<string, unknown>;
  const given = m.node_id ?? m.nodeId;
  if (given !== undefined && given !== '' && given !== nodeId) {
    throw new RegistryRefusal('denied', "node_id is the caller's, derived from its certificate: leave it empty");
  }
  if (!claimsWorker(m.machine_type ?? m.machineType)) throw new RegistryRefusal('denied', `a join-token caller registers as a worker only (machine_type ${String(m.machine_type ?? m.machineType).slice(0, 32)} refused)`);
  const rawAddrs = m.addresses ?? [];
  if (!Array.isArray(rawAddrs)) throw new RegistryRefusal('invalid', 'addresses must be a list');
  if (rawAddrs.length > limits.maxAddresses) throw new RegistryRefusal('invalid', `${rawAddrs.length} addresses; at most ${limits.maxAddresses}`);
  const addresses = rawAddrs.map((a, i) => {
    try {
      // Text (the stored JSON): normalised through the bytes form.
      if (typeof a === 'string') return bytesToIp(ipToBytes(a));
      const ip = (a as { ip?: Uint8Array } | null)?.ip;
      if (!ip) throw new Error('no ip');
      return bytesToIp(ip);
    } catch {
      throw new RegistryRefusal('invalid', `addresses[${i}] is not an IPv4 or IPv6 address`);
    }
  });
  const hostname = typeof m.hostname === 'string' ? m.hostname : '';
  const hErr = hostnameError(hostname, limits.maxHostnameLength);
  if (hErr) throw new RegistryRefusal('invalid', hErr);
  const os = m.operating_system ?? m.operatingSystem ?? '';
  if (typeof os !== 'string') throw new RegistryRefusal('invalid', 'operating_system must be text');
  if (os.length > limits.maxOperatingSystemLength) throw new RegistryRefusal('invalid', `operating_system is ${os.length} characters long; at most ${limits.maxOperatingSystemLength}`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(os)) throw new RegistryRefusal('invalid', 'operating_system holds control characters');
  const record: WorkerRecord = { nodeId, addresses, hostname, machineType: 'worker', operatingSystem: os };
  const size = Buffer.byteLength(JSON.stringify(record));
  if (size > limits.maxRecordBytes) throw new RegistryRefusal('invalid', `the record is ${size} bytes; at most ${limits.maxRecordBytes}`);
  return record;
}

