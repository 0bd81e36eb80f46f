// The hand-made maintenance certificate against three independent readers (Node's X509Certificate,
// @peculiar/x509, openssl) and a real TLS 1.3 handshake.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { x509 } from './x509.ts';
import { selfSignedServerCert } from './self-signed.ts';

const opts = { commonName: 'bronze-93a39c', dnsNames: ['bronze-93a39c', 'localhost'], ipAddresses: ['10.0.2.15', '127.0.0.1', 'fe80::5054:ff:fe12:3456'], ttlMs: 7 * 86_400_000 };

describe('selfSignedServerCert', () => {
  it('reads back in Node: subject, names, validity, self-signed by its own Ed25519 key, not a CA', () => {
    const now = new Date('2026-11-25T10:00:00Z');
    const { crt, key } = selfSignedServerCert({ ...opts, now });
    const c = new crypto.X509Certificate(crt);
    expect(c.subject).toBe('CN=bronze-93a39c');
    expect(c.issuer).toBe('CN=bronze-93a39c');
    expect(c.subjectAltName).toBe('DNS:bronze-93a39c, DNS:localhost, IP Address:10.0.2.15, IP Address:127.0.0.1, IP Address:FE80:0:0:0:5054:FF:FE12:3456');
    expect(c.ca).toBe(false);
    expect(new Date(c.validFrom).toISOString()).toBe('2026-11-25T09:55:00.000Z');
    expect(new Date(c.validTo).toISOString()).toBe('2026-12-02T10:00:00.000Z');
    expect(c.verify(c.publicKey)).toBe(true);
    expect(c.checkPrivateKey(crypto.createPrivateKey(key))).toBe(true);
    expect(c.publicKey.asymmetricKeyType).toBe('ed25519');
    expect(c.checkIP('10.0.2.15')).toBe('10.0.2.15');
    expect(c.checkHost('localhost')).toBe('localhost');
  });

  it('has the extensions @peculiar/x509 expects of a server certificate', () => {
    const c = new x509.X509Certificate(selfSignedServerCert(opts).crt);
    const bc = c.getExtension(x509.BasicConstraintsExtension)!;
    expect([bc.ca, bc.critical]).toEqual([false, true]);
    const ku = c.getExtension(x509.KeyUsagesExtension)!;
    expect([ku.usages, ku.critical]).toEqual([x509.KeyUsageFlags.digitalSignature, true]);
    expect(c.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.serverAuth]);
    expect(c.getExtension(x509.SubjectAlternativeNameExtension)!.names.toJSON()).toEqual([
      { type: 'dns', value: 'bronze-93a39c' },
      { type: 'dns', value: 'localhost' },
      { type: 'ip', value: '10.0.2.15' },
      { type: 'ip', value: '127.0.0.1' },
      { type: 'ip', value: 'fe80::5054:ff:fe12:3456' },
    ]);
    expect(c.serialNumber).toMatch(/^[4-7][0-9a-f]{31}$/);
  });

  it('parses with openssl, with GeneralizedTime from 2050 on', () => {
    const { crt } = selfSignedServerCert({ ...opts, now: new Date('2049-12-30T00:00:00Z') });
    const text = execFileSync('openssl', ['x509', '-noout', '-text'], { input: crt }).toString();
    expect(text).toMatch(/Not After : Jan +6 00:00:00 2050 GMT/);
    expect(text).toMatch(/TLS Web Server Authentication/);
    expect(text).toMatch(/Signature Algorithm: ED25519/);
  });

  it('serves TLS 1.3: a client trusting it verifies the name; an --insecure client connects', async () => {
    const { crt, key } = selfSignedServerCert(opts);
    const server = tls.createServer({ cert: crt, key, minVersion: 'TLSv1.3' }, (s) => s.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const read = (o: tls.ConnectionOptions) =>
      new Promise<string>((resolve, reject) => {
        const s = tls.connect({ host: '127.0.0.1', port, ...o }, () => s.once('data', (d) => resolve(String(d))));
        s.on('error', reject);
      });
    try {
      expect(await read({ ca: crt })).toBe('ok');
      expect(await read({ rejectUnauthorized: false })).toBe('ok');
      await expect(read({ ca: crt, servername: 'other.example' })).rejects.toThrow(/other.example/);
    } finally {
      server.close();
    }
  });

  it('refuses what would make a bad certificate', () => {
    expect(() => selfSignedServerCert({ ...opts, ipAddresses: ['10.0.2'] })).toThrow(/invalid IP address "10.0.2"/);
    expect(() => selfSignedServerCert({ ...opts, dnsNames: ['a b'] })).toThrow(/invalid DNS name "a b"/);
    expect(() => selfSignedServerCert({ ...opts, ttlMs: 0 })).toThrow(/ttlMs must be positive/);
  });
});
