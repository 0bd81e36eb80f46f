// Leaf certificates: client certificates carrying roles, server certificates, CSRs and their signing
// (trustd's path, which never grants a role), role extraction and chain verification.
import { isIP } from 'node:net';
import { X509Certificate as NodeX509 } from 'node:crypto';
import { x509, type CryptoKey } from './x509.ts';
import { loadCA, NOT_BEFORE_SKEW_MS, randomSerial, type CertAndKey } from './ca.ts';
import { generateKeyPair, importPrivateKey, importPublicKey, privateKeyToPem, signingAlgorithmOf, type KeyPair } from './keys.ts';
import { pemDecode } from './pem.ts';

export interface IssueClientOptions {
  commonName: string;
  /** One Organization (O) RDN per role, e.g. `os:admin`. */
  roles: string[];
  ttlMs: number;
  now?: Date;
}

export interface IssueServerOptions {
  commonName: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  ttlMs: number;
  now?: Date;
}

/** The certificate's key: a public key (PEM or WebCrypto key), or a CSR whose signature is checked and whose key is used. */
export type SubjectKey = { publicKey: string | CryptoKey; csr?: undefined } | { csr: string; publicKey?: undefined };

export interface CSROptions {
  commonName: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  /** Requested Organizations. A signer using signCSR ignores them; they exist so tests can ask for roles. */
  organization?: string[];
}

export interface SignCSROptions {
  ttlMs: number;
  /** signCSR only ever issues server-auth certificates without any Organization; callers say so. */
  serverAuthOnly: true;
  now?: Date;
}

async function leaf(
  ca: CertAndKey,
  subject: x509.JsonNameParams,
  publicKey: CryptoKey | ArrayBuffer,
  usage: x509.ExtendedKeyUsage | x509.ExtendedKeyUsage[],
  sans: { dnsNames?: string[] | undefined; ipAddresses?: string[] | undefined },
  ttlMs: number,
  now: Date | undefined,
): Promise<string> {
  if (!(ttlMs > 0)) throw new Error('ttlMs must be positive');
  const { cert: caCert, signingKey, signingAlgorithm } = await loadCA(ca);
  const t = (now ?? new Date()).getTime();
  const names: x509.JsonGeneralName[] = [];
  for (const d of sans.dnsNames ?? []) {
    if (!d || /\s/.test(d)) throw new Error(`invalid DNS name ${JSON.stringify(d)}`);
    names.push({ type: 'dns', value: d });
  }
  for (const ip of sans.ipAddresses ?? []) {
    if (isIP(ip) === 0) throw new Error(`invalid IP address ${JSON.stringify(ip)}`);
    names.push({ type: 'ip', value: ip });
  }
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension(Array.isArray(usage) ? usage : [usage]),
    await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
  ];
  if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: new x509.Name(subject),
    issuer: caCert.subjectName,
    notBefore: new Date(t - NOT_BEFORE_SKEW_MS),
    notAfter: new Date(t + ttlMs),
    publicKey,
    signingKey,
    signingAlgorithm,
    extensions,
  });
  return cert.toString('pem') + '\n';
}

function cnName(commonName: string): x509.JsonNameParams {
  return commonName ? [{ CN: [{ utf8String: commonName }] }] : [];
}

/** A client certificate (clientAuth) whose Organizations are the roles, with a fresh Ed25519 key. */
export async function issueClientCert(ca: CertAndKey, opts: IssueClientOptions): Promise<CertAndKey> {
  for (const r of opts.roles) if (!r) throw new Error('empty role');
  const keys = await generateKeyPair();
  const subject: x509.JsonNameParams = [
    ...opts.roles.map((r) => ({ O: [{ utf8String: r }] })),
    ...cnName(opts.commonName),
  ];
  const crt = await leaf(ca, subject, keys.publicKey, x509.ExtendedKeyUsage.clientAuth, {}, opts.ttlMs, opts.now);
  return { crt, key: await privateKeyToPem(keys.privateKey) };
}

/**
 * A server certificate (serverAuth only, no Organization). With `publicKey` or `csr` it certifies
 * that key and returns only the certificate; without, it makes a key and returns both.
 */
export function issueServerCert(ca: CertAndKey, opts: IssueServerOptions & SubjectKey): Promise<{ crt: string }>;
export function issueServerCert(ca: CertAndKey, opts: IssueServerOptions): Promise<CertAndKey>;
export async function issueServerCert(
  ca: CertAndKey,
  opts: IssueServerOptions & Partial<{ publicKey: string | CryptoKey; csr: string }>,
): Promise<{ crt: string; key?: string }> {
  const subject = cnName(opts.commonName);
  const sans = { dnsNames: opts.dnsNames, ipAddresses: opts.ipAddresses };
  const usage = x509.ExtendedKeyUsage.serverAuth;
  if (opts.csr !== undefined) {
    const csr = await parseVerifiedCSR(opts.csr);
    return { crt: await leaf(ca, subject, csr.publicKey.rawData, usage, sans, opts.ttlMs, opts.now) };
  }
  if (opts.publicKey !== undefined) {
    const pk = typeof opts.publicKey === 'string' ? await importPublicKey(opts.publicKey) : opts.publicKey;
    return { crt: await leaf(ca, subject, pk, usage, sans, opts.ttlMs, opts.now) };
  }
  const keys = await generateKeyPair();
  const crt = await leaf(ca, subject, keys.publicKey, usage, sans, opts.ttlMs, opts.now);
  return { crt, key: await privateKeyToPem(keys.privateKey) };
}

/**
 * A certificate for both ends of mutual TLS (serverAuth and clientAuth), with a fresh Ed25519
 * key: what an etcd member presents to its peers and clients, and machined to etcd.
 */
export async function issuePeerCert(ca: CertAndKey, opts: IssueServerOptions): Promise<CertAndKey> {
  const keys = await generateKeyPair();
  const usages = [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth];
  const crt = await leaf(ca, cnName(opts.commonName), keys.publicKey, usages, { dnsNames: opts.dnsNames, ipAddresses: opts.ipAddresses }, opts.ttlMs, opts.now);
  return { crt, key: await privateKeyToPem(keys.privateKey) };
}

/** A PKCS#10 CSR (PEM) for `key` (a key pair or a private key PEM), with the names as SANs. */
export async function newCSR(key: KeyPair | string, opts: CSROptions): Promise<string> {
  const keys = typeof key === 'string' ? await importPrivateKey(key) : key;
  const name: x509.JsonNameParams = [
    ...(opts.organization ?? []).map((o) => ({ O: [{ utf8String: o }] })),
    ...cnName(opts.commonName),
  ];
  const names: x509.JsonGeneralName[] = [
    ...(opts.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(opts.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: new x509.Name(name),
    keys,
    signingAlgorithm: signingAlgorithmOf(keys),
    extensions: names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : [],
  });
  return csr.toString('pem') + '\n';
}

async function parseVerifiedCSR(csrPem: string): Promise<x509.Pkcs10CertificateRequest> {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(pemDecode(csrPem, ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST']).der);
  } catch (e) {
    throw new Error(`CSR: not a PEM certificate request (${(e as Error).message})`);
  }
  let ok = false;
  try {
    ok = await csr.verify();
  } catch {
    ok = false;
  }
  if (!ok) throw new Error('CSR: signature does not verify');
  return csr;
}

/**
 * Signs a CSR as trustd does: keeps only the CSR's Common Name and its DNS/IP SANs, drops every
 * other subject field (an Organization would be a role) and issues a serverAuth-only certificate.
 */
export async function signCSR(ca: CertAndKey, csrPem: string, opts: SignCSROptions): Promise<string> {
  if (opts.serverAuthOnly !== true) throw new Error('signCSR: only server-auth certificates are issued');
  const csr = await parseVerifiedCSR(csrPem);
  const cn = csr.subjectName.getField('CN')[0] ?? '';
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  const ext = csr.getExtension('2.5.29.17'); // subjectAltName, from the CSR's extensionRequest
  if (ext) {
    const san = new x509.SubjectAlternativeNameExtension(ext.rawData);
    for (const n of san.names.items) {
      if (n.type === 'dns') dnsNames.push(n.value);
      else if (n.type === 'ip') ipAddresses.push(n.value);
    }
  }
  return leaf(ca, cnName(cn), csr.publicKey.rawData, x509.ExtendedKeyUsage.serverAuth, { dnsNames, ipAddresses }, opts.ttlMs, opts.now);
}

/** The Organization values of a certificate's subject, in order: its roles. */
export function rolesOf(certPem: string): string[] {
  const cert = new x509.X509Certificate(pemDecode(certPem, ['CERTIFICATE']).der);
  return cert.subjectName.getField('O');
}

export interface CertificateInfo {
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  notBefore: Date;
  notAfter: Date;
  serialNumber: string;
  isCA: boolean;
  extKeyUsage: string[];
}

/** What an operator wants to see about a certificate. */
export function certificateInfo(certPem: string): CertificateInfo {
  const cert = new x509.X509Certificate(pemDecode(certPem, ['CERTIFICATE']).der);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
  const bc = cert.getExtension(x509.BasicConstraintsExtension);
  const names = san?.names.items ?? [];
  const ekuNames: Record<string, string> = {
    [x509.ExtendedKeyUsage.serverAuth]: 'serverAuth',
    [x509.ExtendedKeyUsage.clientAuth]: 'clientAuth',
  };
  return {
    commonName: cert.subjectName.getField('CN')[0] ?? '',
    organizations: cert.subjectName.getField('O'),
    dnsNames: names.filter((n) => n.type === 'dns').map((n) => n.value),
    ipAddresses: names.filter((n) => n.type === 'ip').map((n) => n.value),
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    serialNumber: cert.serialNumber,
    isCA: bc?.ca ?? false,
    extKeyUsage: (eku?.usages ?? []).map((u) => ekuNames[String(u)] ?? String(u)),
  };
}

/** Why `certPem` is not a valid certificate issued by `caPem` at `now`, or undefined when it is. */
export function chainError(certPem: string, caPem: string, opts: { now?: Date } = {}): string | undefined {
  let cert: NodeX509;
  let ca: NodeX509;
  try {
    cert = new NodeX509(certPem);
  } catch {
    return 'certificate: not a PEM certificate';
  }
  try {
    ca = new NodeX509(caPem);
  } catch {
    return 'CA: not a PEM certificate';
  }
  if (!ca.ca) return 'CA: not a CA certificate';
  if (!cert.checkIssued(ca)) return 'certificate was not issued by this CA';
  if (!cert.verify(ca.publicKey)) return 'certificate signature does not verify with the CA key';
  const now = (opts.now ?? new Date()).getTime();
  for (const [what, c] of [['certificate', cert], ['CA', ca]] as const) {
    if (now < Date.parse(c.validFrom)) return `${what} is not valid before ${c.validFrom}`;
    if (now > Date.parse(c.validTo)) return `${what} expired at ${c.validTo}`;
  }
  return undefined;
}

/** True when `certPem` was issued by `caPem`, verifies with its key, and both are valid now. */
export function verifyChain(certPem: string, caPem: string, opts: { now?: Date } = {}): boolean {
  return chainError(certPem, caPem, opts) === undefined;
}
