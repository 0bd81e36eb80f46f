// Ed25519 keys over WebCrypto, and their PEM forms (PKCS#8 private, SPKI public).
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { webcrypto, type CryptoKey } from './x509.ts';
import { pemDecode, pemEncode, PRIVATE_KEY_LABELS } from './pem.ts';

export const ED25519 = { name: 'Ed25519' } as const;

export interface KeyPair {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

export async function generateKeyPair(): Promise<KeyPair> {
  return (await webcrypto.subtle.generateKey(ED25519, true, ['sign', 'verify'])) as KeyPair;
}

export async function privateKeyToPem(key: CryptoKey): Promise<string> {
  return pemEncode('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', key));
}

export async function publicKeyToPem(key: CryptoKey): Promise<string> {
  return pemEncode('PUBLIC KEY', await webcrypto.subtle.exportKey('spki', key));
}

/** Imports an Ed25519 PKCS#8 private key PEM ("PRIVATE KEY" or Talos's "ED25519 PRIVATE KEY") and derives its public key. */
export async function importPrivateKey(pem: string): Promise<KeyPair> {
  const { der } = pemDecode(pem, PRIVATE_KEY_LABELS);
  const ko = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  if (ko.asymmetricKeyType !== 'ed25519') throw new Error(`private key is ${ko.asymmetricKeyType}, want ed25519`);
  const spki = createPublicKey(ko).export({ format: 'der', type: 'spki' });
  const privateKey = await webcrypto.subtle.importKey('pkcs8', der, ED25519, true, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('spki', spki, ED25519, true, ['verify']);
  return { privateKey, publicKey };
}

/** Imports an Ed25519 public key PEM ("PUBLIC KEY", SPKI). */
export async function importPublicKey(pem: string): Promise<CryptoKey> {
  const { der } = pemDecode(pem, ['PUBLIC KEY']);
  const ko = createPublicKey({ key: der, format: 'der', type: 'spki' });
  if (ko.asymmetricKeyType !== 'ed25519') throw new Error(`public key is ${ko.asymmetricKeyType}, want ed25519`);
  return webcrypto.subtle.importKey('spki', der, ED25519, true, ['verify']);
}
