// CAs as Talos makes them, for tests: a self-signed CA certificate whose key is written the way
// Talos writes it: SEC1 "EC PRIVATE KEY" (P-256, Talos's Kubernetes, etcd and aggregator CAs;
// P-384 too), PKCS#1 "RSA PRIVATE KEY" (the service account key before Talos 1.7), or Talos's
// "ED25519 PRIVATE KEY" (the OS CA).
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { randomSerial, type CertAndKey } from '../../src/pki/ca.ts';
import { keyAlgorithm } from '../../src/pki/keys.ts';
import { pemEncode } from '../../src/pki/pem.ts';
import { webcrypto, x509 } from '../../src/pki/x509.ts';

export type TalosKeyKind = 'ec-p256' | 'ec-p384' | 'rsa' | 'ed25519';

function keyPair(kind: TalosKeyKind): { privateKey: KeyObject; publicKey: KeyObject } {
  switch (kind) {
    case 'ec-p256':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' });
    case 'ec-p384':
      return generateKeyPairSync('ec', { namedCurve: 'P-384' });
    case 'rsa':
      return generateKeyPairSync('rsa', { modulusLength: 2048 });
    case 'ed25519':
      return generateKeyPairSync('ed25519');
  }
}

/** The key PEM in the form Talos writes it. */
export function talosKeyPem(key: KeyObject): string {
  switch (key.asymmetricKeyType) {
    case 'ec':
      return key.export({ format: 'pem', type: 'sec1' }) as string;
    case 'rsa':
      return key.export({ format: 'pem', type: 'pkcs1' }) as string;
    default:
      return pemEncode('ED25519 PRIVATE KEY', key.export({ format: 'der', type: 'pkcs8' }));
  }
}

/** A self-signed CA with a key of `kind`, its key PEM in Talos's form. */
export async function talosCA(kind: TalosKeyKind, organization = 'talos'): Promise<CertAndKey> {
  const pair = keyPair(kind);
  const algorithm = keyAlgorithm(pair.privateKey);
  const keys = {
    privateKey: await webcrypto.subtle.importKey('pkcs8', pair.privateKey.export({ format: 'der', type: 'pkcs8' }), algorithm, true, ['sign']),
    publicKey: await webcrypto.subtle.importKey('spki', pair.publicKey.export({ format: 'der', type: 'spki' }), algorithm, true, ['verify']),
  };
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: new x509.Name([{ O: [{ utf8String: organization }] }]),
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 365 * 86_400_000),
    keys,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
    ],
  });
  return { crt: `${cert.toString('pem')}\n`, key: talosKeyPem(pair.privateKey) };
}
