// Certificate authorities: a self-signed Ed25519 CA, and loading one (certificate + key PEM) to sign
// with: Bronze's Ed25519 CAs and Talos's ECDSA and RSA ones alike.
import { randomBytes, X509Certificate as NodeX509 } from 'node:crypto';
import { x509, webcrypto, type CryptoKey } from './x509.ts';
import { ED25519, generateKeyPair, importPrivateKey, privateKeyToPem, type KeyAlgorithm } from './keys.ts';
import { NOT_BEFORE_SKEW_MS } from './validity.ts';

/** A certificate and its private key, both PEM. The shape Bronze's files and APIs pass around. */
export interface CertAndKey {
  crt: string;
  key: string;
}

export interface NewCAOptions {
  commonName: string;
  organization?: string;
  validityDays: number;
  /** Issue as if at this time (tests). */
  now?: Date;
}

export { NOT_BEFORE_SKEW_MS };

const DAY_MS = 86_400_000;

/** A random positive 128-bit serial number, as hex, whose DER encoding is minimal. */
export function randomSerial(): string {
  const b = randomBytes(16);
  b[0] = (b[0]! & 0x7f) | 0x40;
  return b.toString('hex');
}

export async function newCA(opts: NewCAOptions): Promise<CertAndKey> {
  if (!opts.commonName) throw new Error('newCA: commonName is required');
  if (!(opts.validityDays > 0)) throw new Error('newCA: validityDays must be positive');
  const now = opts.now ?? new Date();
  const keys = await generateKeyPair();
  const name: x509.JsonNameParams = [];
  if (opts.organization) name.push({ O: [{ utf8String: opts.organization }] });
  name.push({ CN: [{ utf8String: opts.commonName }] });
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: new x509.Name(name),
    notBefore: new Date(now.getTime() - NOT_BEFORE_SKEW_MS),
    notAfter: new Date(now.getTime() + opts.validityDays * DAY_MS),
    keys,
    signingAlgorithm: ED25519,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { crt: cert.toString('pem') + '\n', key: await privateKeyToPem(keys.privateKey) };
}

/** A CA ready to sign: its parsed certificate, its private key and the algorithm to sign with. */
export interface LoadedCA {
  cert: x509.X509Certificate;
  signingKey: CryptoKey;
  signingAlgorithm: KeyAlgorithm;
}

/** Parses a CA for signing; throws unless the certificate is a CA and the key is its key. */
export async function loadCA(ca: CertAndKey): Promise<LoadedCA> {
  let node: NodeX509;
  try {
    node = new NodeX509(ca.crt);
  } catch {
    throw new Error('CA certificate: not a PEM certificate');
  }
  if (!node.ca) throw new Error('CA certificate: basicConstraints does not allow signing (not a CA)');
  let keys;
  try {
    keys = await importPrivateKey(ca.key);
  } catch (e) {
    throw new Error(`CA key: ${(e as Error).message}`);
  }
  const spki = new Uint8Array(await webcrypto.subtle.exportKey('spki', keys.publicKey));
  if (!Buffer.from(spki).equals(node.publicKey.export({ format: 'der', type: 'spki' }))) {
    throw new Error('CA key does not match the CA certificate');
  }
  return { cert: new x509.X509Certificate(ca.crt), signingKey: keys.privateKey, signingAlgorithm: keys.algorithm };
}
