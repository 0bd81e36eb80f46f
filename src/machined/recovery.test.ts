import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateConfigs } from '../contract/genconfig.ts';
import { generateSecrets, type SecretsBundle } from '../contract/secrets.ts';
import { META_CONFIGURED, META_RECOVERY, META_SIZE, readMeta } from '../install/meta.ts';
import { silentLogger } from '../lib/log.ts';
import { issueServerCert } from '../pki/certs.ts';
import { nodeIdentity } from './config/identity.ts';
import {
  RECOVERY_MAX_NAMES,
  RecoveryRecorder,
  caOfInvalidConfig,
  decodeRecovery,
  encodeRecovery,
  isConfigured,
  kernelArgumentsAllowed,
  memoryRecordStore,
  metaRecordStore,
  readRecord,
  recoveryIdentityAtBoot,
  renewalDue,
} from './recovery.ts';
import { resetForgets } from './lifecycle/reset.ts';

const DAY = 24 * 3600_000;
const names = (...ips: string[]) => ({ ips: ['127.0.0.1', '::1', ...ips], dns: ['localhost', 'node-1'] });

describe('recovery identity and the configuration record in META', () => {
  let secrets: SecretsBundle;
  let other: SecretsBundle;
  let cp: string;
  let worker: string;
  beforeAll(async () => {
    [secrets, other] = await Promise.all([generateSecrets(), generateSecrets()]);
    const g = generateConfigs({ clusterName: 'r', endpoint: 'https://10.0.0.1:6443', secrets });
    [cp, worker] = [g.controlplane, g.worker];
  });

  const recorder = (store = memoryRecordStore(), o: { now?: () => number; persistent?: boolean } = {}) => ({
    store,
    rec: new RecoveryRecorder({ store: () => store, persistent: () => o.persistent ?? true, log: silentLogger, hostname: () => 'node-1', now: o.now }),
  });
  const issuedFor = (n = names()) => ({ names: n, ca: secrets.certs.os.crt, crt: 'apid-24h.crt', key: 'apid-24h.key' });

  it('decides who is configured: META says so, or STATE holds a configuration; nothing else', () => {
    expect(isConfigured(undefined, false)).toBe(false);
    expect(isConfigured({ configured: false }, false)).toBe(false);
    expect(isConfigured({ configured: true }, false)).toBe(true);
    expect(isConfigured(undefined, true)).toBe(true);
    // Kernel arguments: not while a configured node's STATE failed (it is waited on), nor over STATE's own.
    expect(kernelArgumentsAllowed(undefined, false, true)).toBe(true);
    expect(kernelArgumentsAllowed({ configured: false }, false, true)).toBe(true);
    expect(kernelArgumentsAllowed({ configured: true }, false, true)).toBe(false);
    expect(kernelArgumentsAllowed({ configured: true }, false, false)).toBe(true);
    expect(kernelArgumentsAllowed(undefined, true, false)).toBe(false);
  });

  it('reads an empty META as not configured, and says there is no recovery identity', () => {
    expect(readRecord(new Map())).toEqual({ configured: false, problem: expect.stringMatching(/no recovery identity/) });
    const r = readRecord(new Map([[META_CONFIGURED, '2025-01-01T00:00:00Z']]));
    expect(r.configured).toBe(true);
    expect(r.identity).toBeUndefined();
  });

  it("a control plane's activation records it configured and a year-long certificate signed by the OS CA, kept small", async () => {
    const { store, rec } = recorder();
    rec.activated();
    expect(store.values.get(META_CONFIGURED)).toMatch(/^\d{4}-/);
    await rec.issued(nodeIdentity(cp), issuedFor(names('10.0.0.5')));
    const r = readRecord(store.values);
    expect(r.problem).toBeUndefined();
    expect(r).toMatchObject({ configured: true, identity: { type: 'controlplane', ca: secrets.certs.os.crt } });
    const crt = new crypto.X509Certificate(r.identity!.crt);
    expect(crt.checkIssued(new crypto.X509Certificate(secrets.certs.os.crt))).toBe(true);
    expect(crt.subjectAltName).toContain('IP Address:10.0.0.5');
    expect(crt.subjectAltName).toContain('DNS:node-1');
    expect(crt.subject).toContain('CN=recovery@node-1');
    expect(new Date(crt.validTo).getTime() - Date.now()).toBeGreaterThan(360 * DAY);
    // Server authentication only: the record grants nothing to whoever reads it.
    expect(crt.keyUsage ?? []).not.toContain('1.3.6.1.5.5.7.3.2');
    // Never the CA's key, the token, or a client certificate.
    const raw = store.values.get(META_RECOVERY)!;
    expect(raw).not.toContain(secrets.certs.os.key.split('\n')[1]);
    expect(raw).not.toContain(nodeIdentity(cp).token);
    expect(raw.length).toBeLessThan(4096);
  });

  it('renews only when due: a subset of its names changes nothing; a new name, half its life, another CA renew it', async () => {
    let now = Date.now();
    const { store, rec } = recorder(memoryRecordStore(), { now: () => now });
    const id = nodeIdentity(cp);
    await rec.issued(id, issuedFor(names('10.0.0.5')));
    const first = store.values.get(META_RECOVERY);
    const writes = store.writes;
    // At the next boot apid's first certificate names loopback only: the record stays.
    await rec.issued(id, issuedFor(names()));
    expect(store.writes).toBe(writes);
    expect(store.values.get(META_RECOVERY)).toBe(first);
    // A new address: renewed, carrying the old one too.
    await rec.issued(id, issuedFor(names('10.0.0.6')));
    const second = readRecord(store.values, now).identity!;
    expect(second.names).toEqual(expect.arrayContaining(['10.0.0.5', '10.0.0.6', '127.0.0.1', 'localhost', 'node-1']));
    expect(renewalDue(readRecord(store.values, now), id.ca.crt, ['10.0.0.6'], now)).toBeUndefined();
    // Past half its life.
    now += 200 * DAY;
    expect(renewalDue(readRecord(store.values, now), id.ca.crt, [], now)).toMatch(/past half its life/);
    await rec.issued(id, issuedFor(names('10.0.0.6')));
    expect(store.values.get(META_RECOVERY)).not.toBe(JSON.stringify(second));
    expect(new Date(new crypto.X509Certificate(readRecord(store.values, now).identity!.crt).validTo).getTime()).toBeGreaterThan(now + 360 * DAY);
    // Another CA (a new configuration): the old names are not carried over.
    expect(renewalDue(readRecord(store.values, now), other.certs.os.crt, [], now)).toBe('the OS CA changed');
  });

  it('names stay bounded however often addresses change', async () => {
    const { store, rec } = recorder();
    const id = nodeIdentity(cp);
    for (let i = 0; i < RECOVERY_MAX_NAMES + 10; i++) await rec.issued(id, issuedFor(names(`10.1.0.${i}`)));
    const r = readRecord(store.values).identity!;
    expect(r.names.length).toBe(RECOVERY_MAX_NAMES);
    expect(r.names).toContain(`10.1.0.${RECOVERY_MAX_NAMES + 9}`);
  });

  it("a worker records the certificate trustd issued it, again only when it changes", async () => {
    const { store, rec } = recorder();
    const served = await issueServerCert(secrets.certs.os, { commonName: 'w', ipAddresses: ['10.0.0.9'], dnsNames: [], ttlMs: DAY });
    const id = nodeIdentity(worker);
    await rec.issued(id, { names: names('10.0.0.9'), ca: secrets.certs.os.crt, crt: served.crt, key: served.key });
    expect(readRecord(store.values).identity).toMatchObject({ type: 'worker', crt: served.crt, key: served.key });
    const writes = store.writes;
    await rec.issued(id, { names: names('10.0.0.9'), ca: secrets.certs.os.crt, crt: served.crt, key: served.key });
    expect(store.writes).toBe(writes);
    // It lasts as long as that certificate.
    const later = readRecord(store.values, Date.now() + 2 * DAY);
    expect(later.identity).toBeUndefined();
    expect(later.problem).toMatch(/expired .*trustd/);
  });

  it('records nothing while STATE is not kept (memory-backed, or failed to mount)', async () => {
    const { store, rec } = recorder(memoryRecordStore(), { persistent: false });
    rec.activated();
    await rec.issued(nodeIdentity(cp), issuedFor());
    expect(store.values.size).toBe(0);
  });

  it('refuses a record whose certificate is not the CA\'s, whose key is another, or that is garbage', async () => {
    const good = await issueServerCert(secrets.certs.os, { commonName: 'n', ipAddresses: [], dnsNames: ['n'], ttlMs: DAY });
    const foreign = await issueServerCert(other.certs.os, { commonName: 'n', ipAddresses: [], dnsNames: ['n'], ttlMs: DAY });
    const base = { type: 'controlplane' as const, ca: secrets.certs.os.crt, names: [] };
    expect(decodeRecovery(encodeRecovery({ ...base, crt: good.crt, key: good.key })).identity).toBeDefined();
    expect(decodeRecovery(encodeRecovery({ ...base, crt: foreign.crt, key: foreign.key })).problem).toMatch(/not signed by the OS CA/);
    expect(decodeRecovery(encodeRecovery({ ...base, crt: good.crt, key: foreign.key })).problem).toMatch(/key does not belong/);
    expect(decodeRecovery('{').problem).toMatch(/not JSON/);
    expect(decodeRecovery('{"v":2}').problem).toMatch(/unknown format/);
  });

  it('reads the OS CA of an invalid control-plane configuration, never a worker\'s', () => {
    const broken = cp.replace(/^machine:\n/m, 'machine:\n  notAField: 1\n');
    expect(broken).not.toBe(cp);
    const ca = caOfInvalidConfig(broken);
    expect(ca?.crt.trim()).toBe(secrets.certs.os.crt.trim());
    expect(ca?.key).toMatch(/PRIVATE KEY/);
    expect(caOfInvalidConfig(worker)).toBeUndefined();
    expect(caOfInvalidConfig('::: not yaml')).toBeUndefined();
  });

  it('chooses the identity at boot: META first, then the invalid configuration\'s CA, else none with the reason', async () => {
    const { store, rec } = recorder();
    await rec.issued(nodeIdentity(cp), issuedFor(names('10.0.0.5')));
    const o = { names: names(), hostname: 'node-1', ttlMs: DAY };
    expect(await recoveryIdentityAtBoot(readRecord(store.values), undefined, o)).toMatchObject({ ca: secrets.certs.os.crt, from: expect.stringMatching(/recovery identity in META \(controlplane/) });
    const fromConfig = await recoveryIdentityAtBoot(readRecord(new Map([[META_CONFIGURED, 'x']])), cp.replace(/^machine:\n/m, 'machine:\n  notAField: 1\n'), o);
    expect(fromConfig).toMatchObject({ from: expect.stringMatching(/signed for this boot by the OS CA of the \(invalid\) configuration/) });
    expect(new crypto.X509Certificate((fromConfig as { crt: string }).crt).checkIssued(new crypto.X509Certificate(secrets.certs.os.crt))).toBe(true);
    expect(await recoveryIdentityAtBoot(readRecord(new Map([[META_CONFIGURED, 'x']])), worker, o)).toEqual({ why: expect.stringMatching(/no recovery identity.*gives no OS CA key/) });
    expect(await recoveryIdentityAtBoot(undefined, undefined, o)).toEqual({ why: 'there is no META (no installed disk)' });
  });

  it('a reset that wipes STATE forgets the record; one of EPHEMERAL alone keeps it', () => {
    expect(resetForgets(['STATE', 'EPHEMERAL'])).toEqual([META_CONFIGURED, META_RECOVERY]);
    expect(resetForgets(['EPHEMERAL'])).toEqual([]);
  });

  it('round-trips through a real META store (two copies, CRC) beside the keys already there', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recovery-meta-'));
    try {
      const file = path.join(dir, 'meta');
      fs.writeFileSync(file, Buffer.alloc(META_SIZE));
      const store = metaRecordStore(file);
      store.update({ 'install.disk': '/dev/vda' });
      const rec = new RecoveryRecorder({ store: () => store, persistent: () => true, log: silentLogger, hostname: () => 'node-1' });
      rec.activated();
      await rec.issued(nodeIdentity(cp), issuedFor(names('10.0.0.5')));
      const st = readMeta(file);
      expect(st.values.get('install.disk')).toBe('/dev/vda');
      expect(readRecord(st.values).identity?.type).toBe('controlplane');
      store.update({}, resetForgets(['STATE']));
      expect(readRecord(readMeta(file).values).configured).toBe(false);
      expect(readMeta(file).values.get('install.disk')).toBe('/dev/vda');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
