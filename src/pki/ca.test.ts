import { describe, expect, it } from 'vitest';
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { talosCA, talosKeyPem } from '../../test/lib/talos-pki.ts';
import { loadCA, newCA } from './ca.ts';
import { x509 } from './x509.ts';
import { chainError, issueClientCert, issueServerCert, newCSR, rolesOf, signCSR } from './certs.ts';

describe('newCA', () => {
  it('makes a self-signed Ed25519 CA with the right constraints and validity', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const ca = await newCA({ commonName: 'bronze', organization: 'bronze', validityDays: 3650, now });
    const node = new X509Certificate(ca.crt);
    expect(node.ca).toBe(true);
    expect(node.publicKey.asymmetricKeyType).toBe('ed25519');
    expect(node.verify(node.publicKey)).toBe(true);
    expect(node.subject).toBe('O=bronze\nCN=bronze');
    expect(node.issuer).toBe(node.subject);
    expect(Date.parse(node.validTo)).toBe(now.getTime() + 3650 * 86_400_000);
    expect(Date.parse(node.validFrom)).toBeLessThan(now.getTime());

    const cert = new x509.X509Certificate(ca.crt);
    const bc = cert.getExtension(x509.BasicConstraintsExtension)!;
    expect(bc.ca).toBe(true);
    expect(bc.critical).toBe(true);
    const ku = cert.getExtension(x509.KeyUsagesExtension)!;
    expect(ku.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    expect(cert.getExtension(x509.SubjectKeyIdentifierExtension)).not.toBeNull();
    expect(ca.key).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
  });

  it('rejects bad options', async () => {
    await expect(newCA({ commonName: '', validityDays: 1 })).rejects.toThrow(/commonName/);
    await expect(newCA({ commonName: 'x', validityDays: 0 })).rejects.toThrow(/validityDays/);
  });

  it('loadCA refuses a key that is not the CA key, and a certificate that is not a CA', async () => {
    const a = await newCA({ commonName: 'a', validityDays: 1 });
    const b = await newCA({ commonName: 'b', validityDays: 1 });
    await expect(loadCA({ crt: a.crt, key: b.key })).rejects.toThrow(/does not match/);
    await expect(loadCA({ crt: 'x', key: a.key })).rejects.toThrow(/not a PEM certificate/);
    await expect(loadCA({ crt: a.crt, key: 'x' })).rejects.toThrow(/CA key/);
    const leaf = await issueServerCert(a, { commonName: 'leaf', ttlMs: 60_000 });
    await expect(loadCA(leaf)).rejects.toThrow(/not a CA/);
  });
});

describe('Talos CAs (SEC1 EC and PKCS#1 RSA keys)', () => {
  it.each(['ec-p256', 'ec-p384', 'rsa', 'ed25519'] as const)('loads a %s CA and signs server, client and CSR certificates that verify', async (kind) => {
    const ca = await talosCA(kind);
    expect(ca.key).toMatch(kind === 'rsa' ? /^-----BEGIN RSA PRIVATE KEY-----/ : kind === 'ed25519' ? /^-----BEGIN ED25519 PRIVATE KEY-----/ : /^-----BEGIN EC PRIVATE KEY-----/);
    const loaded = await loadCA(ca);
    expect(loaded.signingAlgorithm.name).toBe(kind === 'rsa' ? 'RSASSA-PKCS1-v1_5' : kind === 'ed25519' ? 'Ed25519' : 'ECDSA');
    const server = await issueServerCert(ca, { commonName: 'node', ipAddresses: ['10.0.0.1'], ttlMs: 60_000 });
    expect(chainError(server.crt, ca.crt)).toBeUndefined();
    const client = await issueClientCert(ca, { commonName: 'admin', roles: ['os:admin'], ttlMs: 60_000 });
    expect(chainError(client.crt, ca.crt)).toBeUndefined();
    expect(rolesOf(client.crt)).toEqual(['os:admin']);
    const csr = await newCSR(server.key, { commonName: 'node2', ipAddresses: ['10.0.0.2'] });
    const signed = await signCSR(ca, csr, { ttlMs: 60_000, serverAuthOnly: true });
    expect(chainError(signed, ca.crt)).toBeUndefined();
    // The signature algorithm is the one Go's crypto/x509 uses for the CA's key.
    const want = { 'ec-p256': 'ecdsa-with-SHA256', 'ec-p384': 'ecdsa-with-SHA384', rsa: 'sha256WithRSAEncryption', ed25519: 'ED25519' }[kind];
    expect(signatureAlgorithm(server.crt)).toBe(want);
  });

  it('signs a CSR made with a Talos EC key', async () => {
    const ca = await newCA({ commonName: 'bronze', validityDays: 1 });
    const key = talosKeyPem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    const csr = await newCSR(key, { commonName: 'n', dnsNames: ['n.example'] });
    expect(chainError(await signCSR(ca, csr, { ttlMs: 60_000, serverAuthOnly: true }), ca.crt)).toBeUndefined();
  });
});

/** The signature algorithm's name, from the certificate's text form. */
function signatureAlgorithm(pem: string): string {
  const alg = new x509.X509Certificate(pem).signatureAlgorithm as unknown as { name: string; hash?: { name: string } };
  if (alg.name === 'ECDSA') return `ecdsa-with-${alg.hash!.name.replace('-', '')}`;
  if (alg.name === 'RSASSA-PKCS1-v1_5') return `${alg.hash!.name.replace('-', '').toLowerCase()}WithRSAEncryption`;
  return alg.name.toUpperCase();
}
