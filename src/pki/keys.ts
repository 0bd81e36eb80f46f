// Keys over WebCrypto and their PEM forms (PKCS#8 private, SPKI public). Bronze makes Ed25519 keys;
// it reads and signs with the keys Talos makes too: Ed25519, ECDSA P-256/P-384 (SEC1 "EC PRIVATE
// KEY") and RSA (PKCS#1 "RSA PRIVATE KEY"), each with the signature algorithm Go's crypto/x509
// picks for it (ECDSA with SHA-256 on P-256 and SHA-384 on P-384, RSA PKCS#1 v1.5 with SHA-256).
import { createPublicKey, type KeyObject } from 'node:crypto';
import { webcrypto, type CryptoKey } from './x509.ts';
import { pemDecode, pemEncode, privateKeyObject } from './pem.ts';

export const ED25519 = { name: 'Ed25519' } as const;

/** WebCrypto parameters to import a key, and to sign with it. */
export type KeyAlgorithm =
  | { name: 'Ed25519' }
  | { name: 'ECDSA'; namedCurve: 'P-256' | 'P-384'; hash: 'SHA-256' | 'SHA-384' }
  | { name: 'RSASSA-PKCS1-v1_5'; hash: 'SHA-256' };

export interface KeyPair {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

/** A key pair with the algorithm to sign with it (certificates, CSRs). */
export interface SigningKeyPair extends KeyPair {
  algorithm: KeyAlgorithm;
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

/** The algorithm of a Node key object; throws for key types Bronze does not sign with. */
export function keyAlgorithm(key: KeyObject): KeyAlgorithm {
  switch (key.asymmetricKeyType) {
    case 'ed25519':
      return ED25519;
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'prime256v1') return { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
      if (curve === 'secp384r1') return { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' };
      throw new Error(`EC key on curve ${curve ?? 'unknown'}: Bronze accepts P-256 and P-384`);
    }
    case 'rsa':
      return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    default:
      throw new Error(`key is ${key.asymmetricKeyType}: Bronze accepts Ed25519, ECDSA (P-256, P-384) and RSA keys`);
  }
}

/**
 * Imports a private key PEM (PKCS#8 "PRIVATE KEY", Talos's "ED25519 PRIVATE KEY", SEC1 "EC
 * PRIVATE KEY" or PKCS#1 "RSA PRIVATE KEY"), derives its public key, and says how to sign with it.
 */
export async function importPrivateKey(pem: string): Promise<SigningKeyPair> {
  const ko = privateKeyObject(pem);
  const algorithm = keyAlgorithm(ko);
  const pkcs8 = ko.export({ format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(ko).export({ format: 'der', type: 'spki' });
  const privateKey = await webcrypto.subtle.importKey('pkcs8', pkcs8, algorithm, true, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('spki', spki, algorithm, true, ['verify']);
  return { privateKey, publicKey, algorithm };
}

/** Imports a public key PEM ("PUBLIC KEY", SPKI) of any type importPrivateKey accepts. */
export async function importPublicKey(pem: string): Promise<CryptoKey> {
  const { der } = pemDecode(pem, ['PUBLIC KEY']);
  const ko = createPublicKey({ key: der, format: 'der', type: 'spki' });
  return webcrypto.subtle.importKey('spki', der, keyAlgorithm(ko), true, ['verify']);
}

/** The signing algorithm of a key pair made here or imported. */
export function signingAlgorithmOf(keys: KeyPair | SigningKeyPair): KeyAlgorithm {
  return 'algorithm' in keys ? keys.algorithm : ED25519;
}
