// A configured node never opens its API (issue 50). "Configured" means META records that a
// configuration was activated on this disk, or STATE holds a configuration (even an invalid
// one); only a node that is neither (a blank disk, a node after `reset`) enters the open
// maintenance mode. A configured node whose configuration cannot be used at boot (STATE does
// not mount or unlock, STATE holds none although META says there was one, the one it holds
// fails validation) reports why and serves its authenticated API with a recovery identity:
//
//   - META's record (META_RECOVERY): the OS CA certificate and a server certificate with its
//     key for this node's API. A control plane signs that certificate itself with the OS CA
//     (a year, renewed when past half its life or when the node has a name it does not
//     carry); a worker records the latest certificate trustd issued it (it lasts as long as
//     that certificate). Never the CA's key, the token or a client certificate: the record
//     grants no access, it only lets the node prove who it is to clients holding the OS CA.
//   - Else, a control plane's invalid configuration whose OS CA (with its key) can still be
//     read: a certificate for this boot is signed with it.
//   - Else nothing: apid gets no certificate and serves nothing, and the console says so.
//
// apid then requires client certificates signed by the OS CA and checks roles as always, so
// the operator's `bronzectl repair STATE`, `reset` and `apply-config` (with credentials) work.
import crypto from 'node:crypto';
import YAML from 'yaml';
import { META_CONFIGURED, META_RECOVERY, MetaStore, readMeta } from '../install/meta.ts';
import { ipVersion } from '../lib/ip.ts';
import type { Logger } from '../lib/log.ts';
import { fromBase64Pem } from '../pki/pem.ts';
import type { NodeIdentity } from './config/identity.ts';
import { RECOVERY_CN_PREFIX } from '../contract/registry-limits.ts';

/** How long a control plane's recovery certificate is valid; renewed when past half of it. */
export const RECOVERY_TTL_MS = 365 * 24 * 3600_000;
/** At most this many names in the recovery certificate (the latest first). */
export const RECOVERY_MAX_NAMES = 32;

export interface RecoveryIdentity {
  type: 'controlplane' | 'worker';
  /** The OS CA certificate (PEM): what apid requires client certificates to be signed by. */
  ca: string;
  /** The server certificate (PEM, signed by the OS CA) and its private key. */
  crt: string;
  key: string;
  /** The names (addresses, host names) the certificate carries. */
  names: string[];
}

/** What META says about this node's configuration. */
export interface ConfiguredRecord {
  /** A configuration was activated on this disk (or installed to it). */
  configured: boolean;
  /** A usable recovery identity. */
  identity?: RecoveryIdentity;
  /** Why META's recovery identity cannot be used (absent, damaged, expired, ...). */
  problem?: string;
  /** The recovery certificate's end of validity (when there is one). */
  notAfter?: Date;
}

/** Where the record is kept: META on the node's disk, or a map in a test. */
export interface RecordStore {
  read(): ReadonlyMap<string, string>;
  /** Sets and removes keys in one write. */
  update(set: Readonly<Record<string, string>>, remove?: readonly string[]): void;
}

export function metaRecordStore(device: string): RecordStore {
  return {
    read: () => readMeta(device).values,
    update: (set, remove = []) => void MetaStore.update(device, set, remove),
  };
}

export function memoryRecordStore(init: Record<string, string> = {}): RecordStore & { values: Map<string, string>; writes: number } {
  const s = {
    values: new Map(Object.entries(init)),
    writes: 0,
    read: () => new Map(s.values),
    update: (set: Readonly<Record<string, string>>, remove: readonly string[] = []) => {
      for (const [k, v] of Object.entries(set)) s.values.set(k, v);
      for (const k of remove) s.values.delete(k);
      s.writes++;
    },
  };
  return s;
}

/** The record as META stores it (JSON, a few KiB: META holds 512 KiB per copy). */
export function encodeRecovery(id: RecoveryIdentity): string {
  return JSON.stringify({ v: 1, type: id.type, ca: id.ca, crt: id.crt, key: id.key, names: id.names });
}

/** Reads a recovery identity and checks it: the certificate signed by the CA, the key its own, valid now. */
export function decodeRecovery(text: string, now = Date.now()): { identity?: RecoveryIdentity; problem?: string; notAfter?: Date } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { problem: `META's ${META_RECOVERY} is not JSON` };
  }
  const r = raw as Record<string, unknown>;
  if (!r || typeof r !== 'object' || r.v !== 1) return { problem: `META's ${META_RECOVERY} has an unknown format` };
  if (r.type !== 'controlplane' && r.type !== 'worker') return { problem: `META's ${META_RECOVERY}: type must be controlplane or worker` };
  for (const f of ['ca', 'crt', 'key'] as const) if (typeof r[f] !== 'string' || !r[f]) return { problem: `META's ${META_RECOVERY}: ${f} missing` };
  const names = Array.isArray(r.names) && r.names.every((n) => typeof n === 'string') ? (r.names as string[]) : [];
  const id: RecoveryIdentity = { type: r.type, ca: r.ca as string, crt: r.crt as string, key: r.key as string, names };
  let ca: crypto.X509Certificate;
  let crt: crypto.X509Certificate;
  try {
    ca = new crypto.X509Certificate(id.ca);
    crt = new crypto.X509Certificate(id.crt);
  } catch (err) {
    return { problem: `META's ${META_RECOVERY}: a certificate cannot be read (${(err as Error).message})` };
  }
  if (!crt.checkIssued(ca) || !crt.verify(ca.publicKey)) return { problem: `META's ${META_RECOVERY}: the certificate is not signed by the OS CA recorded with it` };
  try {
    if (!crt.checkPrivateKey(crypto.createPrivateKey(id.key))) return { problem: `META's ${META_RECOVERY}: the key does not belong to the certificate` };
  } catch (err) {
    return { problem: `META's ${META_RECOVERY}: the key cannot be read (${(err as Error).message})` };
  }
  const notAfter = new Date(crt.validTo);
  if (now > notAfter.getTime()) return { problem: `the recovery certificate in META expired on ${notAfter.toISOString()}${id.type === 'worker' ? " (a worker's lasts as long as the last certificate trustd issued it)" : ''}`, notAfter };
  if (now < new Date(crt.validFrom).getTime()) return { problem: `the recovery certificate in META is valid only from ${new Date(crt.validFrom).toISOString()} (is the clock right?)`, notAfter };
  return { identity: id, notAfter };
}

export function readRecord(values: ReadonlyMap<string, string>, now = Date.now()): ConfiguredRecord {
  const configured = values.has(META_CONFIGURED);
  const text = values.get(META_RECOVERY);
  if (text === undefined) return { configured, problem: 'META holds no recovery identity (recorded once a configuration is active on an installed node; not by Bronze before issue 50)' };
  // A recovery identity is only written for a configured node: it counts as the record too.
  return { configured: true, ...decodeRecovery(text, now) };
}

/** Whether the node counts as configured: META says so, or STATE holds a configuration. */
export function isConfigured(record: ConfiguredRecord | undefined, storedConfig: boolean): boolean {
  return storedConfig || !!record?.configured;
}

/**
 * Whether the kernel arguments (bronze.config=, bronze.config.inline=) may supply the
 * configuration: only when STATE holds none and, for a configured node, STATE is there to
 * hold one (a STATE that failed to mount is waited on, as Talos waits for it).
 */
export function kernelArgumentsAllowed(record: ConfiguredRecord | undefined, storedConfig: boolean, stateFailed: boolean): boolean {
  return !storedConfig && !(record?.configured && stateFailed);
}

/** The OS CA a control plane's configuration names, read without validating the rest (an invalid configuration). */
export function caOfInvalidConfig(text: string): { crt: string; key: string } | undefined {
  try {
    for (const d of YAML.parseAllDocuments(text)) {
      const doc = d.toJS() as { machine?: { type?: unknown; ca?: { crt?: unknown; key?: unknown } } } | null;
      const m = doc?.machine;
      if (!m || typeof m !== 'object') continue;
      if (m.type !== 'controlplane' && m.type !== 'init') return undefined;
      if (typeof m.ca?.crt !== 'string' || typeof m.ca?.key !== 'string') return undefined;
      const crt = fromBase64Pem(m.ca.crt);
      const key = fromBase64Pem(m.ca.key);
      // Usable only as a pair: the key signs what the certificate verifies.
      const x = new crypto.X509Certificate(crt);
      const pub = crypto.createPublicKey(crypto.createPrivateKey(key));
      if (!x.publicKey.equals(pub)) return undefined;
      return { crt, key };
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * Whether a control plane's recovery identity must be issued (again), and why: none, another
 * CA, past half its life, or a name the node has now that it does not carry.
 */
export function renewalDue(record: ConfiguredRecord, caCrt: string, names: readonly string[], now = Date.now()): string | undefined {
  const id = record.identity;
  if (!id) return record.problem ?? 'none recorded';
  if (id.type !== 'controlplane') return 'the record is a worker\'s';
  if (id.ca.trim() !== caCrt.trim()) return 'the OS CA changed';
  const crt = new crypto.X509Certificate(id.crt);
  const from = new Date(crt.validFrom).getTime();
  const to = new Date(crt.validTo).getTime();
  if (now > from + (to - from) / 2) return `past half its life (valid until ${new Date(to).toISOString()})`;
  const missing = names.filter((n) => !id.names.includes(n));
  if (missing.length) return `new names: ${missing.join(', ')}`;
  return undefined;
}

/** The names a renewed certificate carries: the node's names now, then the recorded ones, at most RECOVERY_MAX_NAMES. */
export function mergedNames(now: readonly string[], recorded: readonly string[]): string[] {
  return [...new Set([...now, ...recorded])].slice(0, RECOVERY_MAX_NAMES);
}

export interface RecoveryRecorderOptions {
  /** META (undefined: none, as when running from the ISO or PXE without a disk). */
  store: () => RecordStore | undefined;
  /** Whether STATE survives a reboot: only then is the node recorded as configured. */
  persistent: () => boolean;
  log: Logger;
  hostname: () => string;
  ttlMs?: number;
  now?: () => number;
}

/** What ApiCertificates issued: the names, the CA, and apid's serving certificate and key. */
export interface IssuedApiCertificate {
  names: { ips: string[]; dns: string[] };
  ca: string;
  crt: string;
  key: string;
}

/** Keeps META's configuration record and recovery identity up to date as configurations are activated and certificates issued. */
export class RecoveryRecorder {
  #chain: Promise<void> = Promise.resolve();

  constructor(private readonly o: RecoveryRecorderOptions) {}

  /** The record now (undefined: no META). */
  read(): ConfiguredRecord | undefined {
    const store = this.o.store();
    if (!store) return undefined;
    try {
      return readRecord(store.read(), this.#now());
    } catch (err) {
      this.o.log.warn(`META: reading the configuration record: ${(err as Error).message}`);
      return { configured: false, problem: `META cannot be read: ${(err as Error).message}` };
    }
  }

  /** A configuration with an identity is active: META records that this node is configured. */
  activated(): void {
    const store = this.#store();
    if (!store) return;
    try {
      if (!store.read().has(META_CONFIGURED)) {
        store.update({ [META_CONFIGURED]: new Date(this.#now()).toISOString() });
        this.o.log.info('META: this node is recorded as configured: from now on a failure to read its configuration at boot keeps its API authenticated (no maintenance mode)');
      }
    } catch (err) {
      this.o.log.warn(`META: recording the node as configured: ${(err as Error).message}`);
    }
  }

  /** apid got a certificate: the recovery identity follows (a worker's is that certificate; a control plane signs its own). */
  issued(id: NodeIdentity, cert: IssuedApiCertificate): Promise<void> {
    const run = this.#chain.then(() => this.#issued(id, cert));
    this.#chain = run.catch((err: Error) => this.o.log.warn(`META: recording the recovery identity: ${err.message}`));
    return this.#chain;
  }

  async #issued(id: NodeIdentity, cert: IssuedApiCertificate): Promise<void> {
    const store = this.#store();
    if (!store) return;
    const values = store.read();
    const record = readRecord(values, this.#now());
    const names = [...cert.names.ips, ...cert.names.dns];
    let next: RecoveryIdentity;
    if (id.type === 'worker') {
      if (record.identity?.crt === cert.crt && record.identity.ca === cert.ca) return;
      next = { type: 'worker', ca: cert.ca, crt: cert.crt, key: cert.key, names };
    } else {
      const why = renewalDue(record, id.ca.crt, names, this.#now());
      if (!why) return;
      const merged = record.identity?.type === 'controlplane' && record.identity.ca.trim() === id.ca.crt.trim() ? mergedNames(names, record.identity.names) : mergedNames(names, []);
      const { issueServerCert } = await import('../pki/certs.ts');
      const issued = await issueServerCert(
        { crt: id.ca.crt, key: id.ca.key! },
        { commonName: `${RECOVERY_CN_PREFIX}${this.o.hostname()}`, ipAddresses: merged.filter((n) => ipVersion(n)), dnsNames: merged.filter((n) => !ipVersion(n)), ttlMs: this.o.ttlMs ?? RECOVERY_TTL_MS, now: new Date(this.#now()) },
      );
      next = { type: 'controlplane', ca: id.ca.crt, crt: issued.crt, key: issued.key, names: merged };
      this.o.log.info(`META: recovery identity issued by the OS CA (${why}), valid until ${new crypto.X509Certificate(issued.crt).validTo}, for ${merged.join(', ')}`);
    }
    store.update({ [META_CONFIGURED]: values.get(META_CONFIGURED) ?? new Date(this.#now()).toISOString(), [META_RECOVERY]: encodeRecovery(next) });
    if (id.type === 'worker') this.o.log.info(`META: recovery identity recorded: the certificate trustd issued, valid until ${new crypto.X509Certificate(cert.crt).validTo}`);
  }

  /** Settles once the records asked for so far are written. */
  settled(): Promise<void> {
    return this.#chain;
  }

  #store(): RecordStore | undefined {
    return this.o.persistent() ? this.o.store() : undefined;
  }

  #now(): number {
    return (this.o.now ?? Date.now)();
  }
}

/** What a configured node whose configuration cannot be used serves its API with, and where it came from. */
export type BootIdentity = { ca: string; crt: string; key: string; from: string } | { why: string };

/**
 * The identity for a node left without a usable configuration: META's recovery identity, else
 * one signed for this boot with the OS CA of a control plane's invalid configuration, else none
 * (`why` says what is missing).
 */
export async function recoveryIdentityAtBoot(
  record: ConfiguredRecord | undefined,
  invalidConfig: string | undefined,
  o: { names: { ips: string[]; dns: string[] }; hostname: string; ttlMs: number },
): Promise<BootIdentity> {
  if (record?.identity) {
    const id = record.identity;
    return { ca: id.ca, crt: id.crt, key: id.key, from: `the recovery identity in META (${id.type}, valid until ${record.notAfter?.toISOString() ?? '?'})` };
  }
  const ca = invalidConfig !== undefined ? caOfInvalidConfig(invalidConfig) : undefined;
  if (ca) {
    const { issueServerCert } = await import('../pki/certs.ts');
    const s = await issueServerCert(ca, { commonName: `${RECOVERY_CN_PREFIX}${o.hostname}`, ipAddresses: o.names.ips, dnsNames: o.names.dns, ttlMs: o.ttlMs });
    return { ca: ca.crt, crt: s.crt, key: s.key, from: "a certificate signed for this boot by the OS CA of the (invalid) configuration on STATE" };
  }
  const why = record ? record.problem ?? 'META holds no recovery identity' : 'there is no META (no installed disk)';
  return { why: invalidConfig !== undefined ? `${why}, and the configuration on STATE gives no OS CA key to sign one with` : why };
}
