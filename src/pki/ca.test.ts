import { describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import { loadCA, newCA } from './ca.ts';
import { x509 } from './x509.ts';
import { issueServerCert } from './certs.ts';

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
