import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { newCA, type CertAndKey } from '../pki/ca.ts';
import { issueClientCert, issueServerCert } from '../pki/certs.ts';
import { workerIdentity } from './worker-identity.ts';
import { RECOVERY_CN_PREFIX, WORKER_ID_PATTERN } from '../contract/registry-limits.ts';

const der = (pem: string) => Buffer.from(new crypto.X509Certificate(pem).raw);

describe("the Hello caller's identity: an API certificate issued by the OS CA", () => {
  let ca: CertAndKey;
  let other: CertAndKey;
  beforeAll(async () => {
    ca = await newCA({ commonName: 'os', validityDays: 10 });
    other = await newCA({ commonName: 'another cluster', validityDays: 10 });
  });

  it('derives the node id from the public key: the same key, the same id; another key, another', async () => {
    const a = await issueServerCert(ca, { commonName: 'w1', ipAddresses: ['10.0.0.5'], ttlMs: 3600_000 });
    const renewed = await issueServerCert(ca, { commonName: 'renamed', publicKey: crypto.createPublicKey(a.key).export({ type: 'spki', format: 'pem' }) as string, ttlMs: 3600_000 });
    const b = await issueServerCert(ca, { commonName: 'w1', ipAddresses: ['10.0.0.5'], ttlMs: 3600_000 });
    const id = workerIdentity(der(a.crt), ca.crt);
    expect(id.nodeId).toMatch(WORKER_ID_PATTERN);
    expect(workerIdentity(der(renewed.crt), ca.crt).nodeId).toBe(id.nodeId);
    expect(workerIdentity(der(b.crt), ca.crt).nodeId).not.toBe(id.nodeId);
  });

  it('refuses no certificate, another CA, an expired or not yet valid one, a CA, an operator certificate and a recovery one', async () => {
    expect(() => workerIdentity(undefined, ca.crt)).toThrow(/no client certificate: present the API certificate trustd issued/);
    expect(() => workerIdentity(Buffer.from('junk'), ca.crt)).toThrow(/cannot be parsed/);
    const foreign = await issueServerCert(other, { commonName: 'w', ttlMs: 3600_000 });
    expect(() => workerIdentity(der(foreign.crt), ca.crt)).toThrow(/was not issued by this cluster's OS CA/);
    const old = await issueServerCert(ca, { commonName: 'w', ttlMs: 3600_000, now: new Date(Date.now() - 2 * 3600_000) });
    expect(() => workerIdentity(der(old.crt), ca.crt)).toThrow(/expired at/);
    const early = await issueServerCert(ca, { commonName: 'w', ttlMs: 3600_000 });
    expect(() => workerIdentity(der(early.crt), ca.crt, new Date(Date.now() - 24 * 3600_000))).toThrow(/not valid before/);
    expect(() => workerIdentity(der(ca.crt), ca.crt)).toThrow(/is a CA certificate/);
    const admin = await issueClientCert(ca, { commonName: 'admin', roles: ['os:admin'], ttlMs: 3600_000 });
    expect(() => workerIdentity(der(admin.crt), ca.crt)).toThrow(/not a node's API certificate \(no serverAuth usage\)/);
    // A control plane's recovery certificate (META, unencrypted) is not a worker's identity.
    const recovery = await issueServerCert(ca, { commonName: `${RECOVERY_CN_PREFIX}cp1`, ipAddresses: ['10.0.0.2'], ttlMs: 3600_000 });
    expect(() => workerIdentity(der(recovery.crt), ca.crt)).toThrow(/is a node's recovery certificate/);
  });
});
