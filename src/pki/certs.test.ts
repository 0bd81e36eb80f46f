import { beforeAll, describe, expect, it } from 'vitest';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { newCA, type CertAndKey } from './ca.ts';
import {
  certificateInfo,
  chainError,
  issueClientCert,
  issueServerCert,
  newCSR,
  rolesOf,
  signCSR,
  verifyChain,
} from './certs.ts';
import { generateKeyPair, privateKeyToPem, publicKeyToPem } from './keys.ts';
import { pemDecode, pemEncode } from './pem.ts';
import { x509 } from './x509.ts';

const HOUR = 3_600_000;
let ca: CertAndKey;
let otherCA: CertAndKey;

beforeAll(async () => {
  ca = await newCA({ commonName: 'bronze', organization: 'bronze', validityDays: 365 });
  otherCA = await newCA({ commonName: 'bronze', organization: 'bronze', validityDays: 365 });
});

describe('client certificates', () => {
  it('carry one O per role, in order, and clientAuth only', async () => {
    const c = await issueClientCert(ca, { commonName: 'admin', roles: ['os:admin', 'os:etcd:backup'], ttlMs: HOUR });
    expect(rolesOf(c.crt)).toEqual(['os:admin', 'os:etcd:backup']);
    const info = certificateInfo(c.crt);
    expect(info.commonName).toBe('admin');
    expect(info.extKeyUsage).toEqual(['clientAuth']);
    expect(info.isCA).toBe(false);
    expect(info.dnsNames).toEqual([]);
    // Each role is its own RDN.
    expect(new X509Certificate(c.crt).subject).toBe('O=os:admin\nO=os:etcd:backup\nCN=admin');
    expect(verifyChain(c.crt, ca.crt)).toBe(true);
    expect(c.key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
  });

  it('may carry no role at all', async () => {
    const c = await issueClientCert(ca, { commonName: 'nobody', roles: [], ttlMs: HOUR });
    expect(rolesOf(c.crt)).toEqual([]);
  });

  it('reads roles from a multi-valued RDN too (how Go encodes several Organizations)', async () => {
    const keys = await generateKeyPair();
    const caCert = new x509.X509Certificate(ca.crt);
    const { importPrivateKey } = await import('./keys.ts');
    const caKeys = await importPrivateKey(ca.key);
    const cert = await x509.X509CertificateGenerator.create({
      subject: new x509.Name([{ O: [{ utf8String: 'os:reader' }, { utf8String: 'os:operator' }] }, { CN: ['go'] }]),
      issuer: caCert.subjectName,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: { name: 'Ed25519' },
      extensions: [new x509.BasicConstraintsExtension(false)],
    });
    expect(rolesOf(cert.toString('pem')).sort()).toEqual(['os:operator', 'os:reader']);
  });
});

describe('server certificates', () => {
  it('carry SANs, serverAuth only, no Organization', async () => {
    const s = await issueServerCert(ca, {
      commonName: 'node-1',
      dnsNames: ['node-1', 'node-1.example.org'],
      ipAddresses: ['10.5.0.2', 'fd00::2'],
      ttlMs: HOUR,
    });
    const info = certificateInfo(s.crt);
    expect(info.organizations).toEqual([]);
    expect(info.extKeyUsage).toEqual(['serverAuth']);
    expect(info.dnsNames).toEqual(['node-1', 'node-1.example.org']);
    expect(info.ipAddresses).toEqual(['10.5.0.2', 'fd00::2']);
    expect(info.notAfter.getTime() - info.notBefore.getTime()).toBe(HOUR + 5 * 60_000);
    const node = new X509Certificate(s.crt);
    expect(node.checkHost('node-1.example.org')).toBe('node-1.example.org');
    expect(node.checkIP('fd00::2')).toBe('fd00::2');
    expect(verifyChain(s.crt, ca.crt)).toBe(true);
  });

  it('certifies a given public key, or the key of a CSR', async () => {
    const kp = await generateKeyPair();
    const pub = await publicKeyToPem(kp.publicKey);
    const fromPem = await issueServerCert(ca, { commonName: 'a', ttlMs: HOUR, publicKey: pub });
    expect('key' in fromPem).toBe(false);
    const spki = (c: string) => new X509Certificate(c).publicKey.export({ format: 'pem', type: 'spki' });
    expect(spki(fromPem.crt)).toBe(pub);
    const fromKey = await issueServerCert(ca, { commonName: 'a', ttlMs: HOUR, publicKey: kp.publicKey });
    expect(spki(fromKey.crt)).toBe(pub);
    const csr = await newCSR(kp, { commonName: 'ignored', organization: ['os:admin'] });
    const fromCSR = await issueServerCert(ca, { commonName: 'b', dnsNames: ['b'], ttlMs: HOUR, csr });
    expect(spki(fromCSR.crt)).toBe(pub);
    expect(certificateInfo(fromCSR.crt).commonName).toBe('b');
    expect(rolesOf(fromCSR.crt)).toEqual([]);
  });

  it('rejects invalid names and ttl', async () => {
    await expect(issueServerCert(ca, { commonName: 'a', ipAddresses: ['10.0.0.300'], ttlMs: HOUR })).rejects.toThrow(/invalid IP/);
    await expect(issueServerCert(ca, { commonName: 'a', dnsNames: ['a b'], ttlMs: HOUR })).rejects.toThrow(/invalid DNS/);
    await expect(issueServerCert(ca, { commonName: 'a', ttlMs: 0 })).rejects.toThrow(/ttlMs/);
  });
});

describe('CSR signing (trustd)', () => {
  it('keeps CN and SANs, ignores any Organization, issues serverAuth only', async () => {
    const kp = await generateKeyPair();
    const csr = await newCSR(await privateKeyToPem(kp.privateKey), {
      commonName: 'worker-1',
      dnsNames: ['worker-1'],
      ipAddresses: ['10.5.0.3'],
      organization: ['os:admin', 'os:operator'],
    });
    expect(csr).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----/);
    const crt = await signCSR(ca, csr, { ttlMs: HOUR, serverAuthOnly: true });
    expect(rolesOf(crt)).toEqual([]);
    const info = certificateInfo(crt);
    expect(info.commonName).toBe('worker-1');
    expect(info.dnsNames).toEqual(['worker-1']);
    expect(info.ipAddresses).toEqual(['10.5.0.3']);
    expect(info.extKeyUsage).toEqual(['serverAuth']);
    expect(new X509Certificate(crt).subject).toBe('CN=worker-1');
    expect(verifyChain(crt, ca.crt)).toBe(true);
  });

  it('rejects a CSR whose signature does not verify', async () => {
    const kp = await generateKeyPair();
    const csr = await newCSR(kp, { commonName: 'worker-1' });
    const der = Buffer.from(pemDecode(csr, ['CERTIFICATE REQUEST']).der);
    der[der.length - 1]! ^= 0x01; // last byte of the signature
    await expect(signCSR(ca, pemEncode('CERTIFICATE REQUEST', der), { ttlMs: HOUR, serverAuthOnly: true })).rejects.toThrow(
      /signature does not verify/,
    );
    // A changed subject (CN "worker-1" → "worker-2") breaks the signature too.
    const der2 = Buffer.from(pemDecode(csr, ['CERTIFICATE REQUEST']).der);
    const at = der2.indexOf(Buffer.from('worker-1'));
    der2[at + 7] = '2'.charCodeAt(0);
    await expect(signCSR(ca, pemEncode('CERTIFICATE REQUEST', der2), { ttlMs: HOUR, serverAuthOnly: true })).rejects.toThrow(
      /signature does not verify/,
    );
    await expect(signCSR(ca, 'garbage', { ttlMs: HOUR, serverAuthOnly: true })).rejects.toThrow(/not a PEM certificate request/);
  });
});

describe('verifyChain', () => {
  it('fails for another CA, expired and not-yet-valid certificates', async () => {
    const c = await issueClientCert(ca, { commonName: 'admin', roles: ['os:admin'], ttlMs: HOUR });
    expect(verifyChain(c.crt, otherCA.crt)).toBe(false);
    // Same subject name, different key: it is the signature that fails.
    expect(chainError(c.crt, otherCA.crt)).toMatch(/not issued by this CA|signature does not verify/);
    expect(chainError(c.crt, ca.crt, { now: new Date(Date.now() + 2 * HOUR) })).toMatch(/certificate expired/);
    expect(chainError(c.crt, ca.crt, { now: new Date(Date.now() - HOUR) })).toMatch(/not valid before/);
    expect(chainError(c.crt, c.crt)).toMatch(/not a CA/);
    expect(chainError('x', ca.crt)).toMatch(/certificate: not a PEM/);
    const otherName = await newCA({ commonName: 'other', validityDays: 1 });
    expect(chainError(c.crt, otherName.crt)).toMatch(/not issued by this CA/);
  });
});

describe('TLS 1.3 with Ed25519 certificates', () => {
  async function handshake(client: CertAndKey): Promise<{ subject?: Record<string, unknown>; serverError?: string; clientError?: string }> {
    const server = await issueServerCert(ca, { commonName: 'node', ipAddresses: ['127.0.0.1'], ttlMs: HOUR });
    const srv = tls.createServer({
      key: server.key,
      cert: server.crt,
      ca: ca.crt,
      minVersion: 'TLSv1.3',
      requestCert: true,
      rejectUnauthorized: true,
    });
    const result: { subject?: Record<string, unknown>; serverError?: string; clientError?: string } = {};
    const serverDone = new Promise<void>((resolve) => {
      srv.on('secureConnection', (sock) => {
        result.subject = sock.getPeerCertificate().subject as unknown as Record<string, unknown>;
        sock.end('ok');
        resolve();
      });
      srv.on('tlsClientError', (err) => {
        result.serverError = err.message;
        resolve();
      });
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const { port } = srv.address() as AddressInfo;
    const clientDone = new Promise<void>((resolve) => {
      const sock = tls.connect({ host: '127.0.0.1', port, ca: ca.crt, cert: client.crt, key: client.key, minVersion: 'TLSv1.3' });
      sock.on('data', () => {});
      sock.on('error', (err) => {
        result.clientError = err.message;
        resolve();
      });
      sock.on('close', () => resolve());
    });
    await Promise.all([serverDone, clientDone]);
    await new Promise<void>((r) => srv.close(() => r()));
    return result;
  }

  it('accepts a client certificate from the CA and exposes its roles as subject.O', async () => {
    const client = await issueClientCert(ca, { commonName: 'admin', roles: ['os:admin', 'os:reader'], ttlMs: HOUR });
    const r = await handshake(client);
    expect(r.serverError).toBeUndefined();
    expect(r.clientError).toBeUndefined();
    expect(r.subject?.O).toEqual(['os:admin', 'os:reader']);
    expect(r.subject?.CN).toBe('admin');
  });

  it('rejects a client certificate from another CA', async () => {
    const client = await issueClientCert(otherCA, { commonName: 'admin', roles: ['os:admin'], ttlMs: HOUR });
    const r = await handshake(client);
    expect(r.subject).toBeUndefined();
    expect(r.serverError).toBeDefined();
  });
});
