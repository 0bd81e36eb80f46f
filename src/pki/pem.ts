// PEM (RFC 7468) encoding and decoding, and the base64-of-PEM form Talos keeps in its YAML files.
import { Buffer } from 'node:buffer';
import { createPrivateKey, type KeyObject } from 'node:crypto';

export interface PemBlock {
  label: string;
  der: Buffer;
}

/**
 * Labels Bronze accepts for a private key: PKCS#8 (the standard label, and Talos's Ed25519 one),
 * SEC1 EC keys (Talos's Kubernetes and etcd CAs, P-256 or P-384) and PKCS#1 RSA keys (Talos's
 * service account key before v1.7, and OpenSSL's traditional form).
 */
export const PRIVATE_KEY_LABELS = ['PRIVATE KEY', 'ED25519 PRIVATE KEY', 'EC PRIVATE KEY', 'RSA PRIVATE KEY'] as const;

/** The DER encoding a private key PEM label stands for. */
const KEY_ENCODING: Record<string, 'pkcs8' | 'sec1' | 'pkcs1'> = {
  'PRIVATE KEY': 'pkcs8',
  'ED25519 PRIVATE KEY': 'pkcs8',
  'EC PRIVATE KEY': 'sec1',
  'RSA PRIVATE KEY': 'pkcs1',
};

/** Elliptic curves Bronze signs with (Talos's ECDSA keys are P-256; P-384 is accepted too). */
export const EC_CURVES = ['prime256v1', 'secp384r1'] as const;

export function pemEncode(label: string, der: ArrayBuffer | Uint8Array): string {
  const b64 = Buffer.from(der instanceof ArrayBuffer ? new Uint8Array(der) : der).toString('base64');
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([A-Za-z0-9+/=\r\n\t ]*?)-----END ([A-Z0-9 ]+)-----/g;

/** Every PEM block in `text`, in order. Text around and between blocks is ignored, as OpenSSL does. */
export function pemDecodeAll(text: string): PemBlock[] {
  const out: PemBlock[] = [];
  for (const m of text.matchAll(BLOCK)) {
    const [, begin, body, end] = m;
    if (begin !== end) throw new Error(`PEM block "${begin}" ends with "${end}"`);
    const compact = body!.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0) {
      throw new Error(`PEM block "${begin}" has invalid base64`);
    }
    out.push({ label: begin!, der: Buffer.from(compact, 'base64') });
  }
  return out;
}

/** The single PEM block in `text`, whose label must be one of `labels`. */
export function pemDecode(text: string, labels: readonly string[]): PemBlock {
  const blocks = pemDecodeAll(text);
  if (blocks.length === 0) throw new Error(`no PEM block (want ${labels.join(' or ')})`);
  if (blocks.length > 1) throw new Error(`${blocks.length} PEM blocks where one was expected`);
  const b = blocks[0]!;
  if (!labels.includes(b.label)) throw new Error(`PEM block is "${b.label}", want ${labels.join(' or ')}`);
  return b;
}

/**
 * Reads a private key PEM of any of PRIVATE_KEY_LABELS into a KeyObject; throws naming what is
 * wrong (a curve other than P-256/P-384, a key type Bronze cannot sign with, bad DER).
 */
export function privateKeyObject(pem: string): KeyObject {
  const { label, der } = pemDecode(pem, PRIVATE_KEY_LABELS);
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: der, format: 'der', type: KEY_ENCODING[label]! });
  } catch (e) {
    throw new Error(`PEM block "${label}" holds no valid private key (${(e as Error).message})`);
  }
  const type = key.asymmetricKeyType;
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve ?? 'unknown';
    if (!(EC_CURVES as readonly string[]).includes(curve)) throw new Error(`EC private key on curve ${curve}: Bronze accepts P-256 and P-384`);
  } else if (type !== 'ed25519' && type !== 'rsa') {
    throw new Error(`private key is ${type}: Bronze accepts Ed25519, ECDSA (P-256, P-384) and RSA keys`);
  }
  return key;
}

/**
 * A private key PEM as PKCS#8 with the standard label, whatever form it came in (Talos writes
 * "ED25519 PRIVATE KEY" and SEC1 "EC PRIVATE KEY"; Node's TLS and WebCrypto want PKCS#8).
 */
export function normalizePrivateKeyPem(pem: string): string {
  const { label, der } = pemDecode(pem, PRIVATE_KEY_LABELS);
  if (KEY_ENCODING[label] === 'pkcs8') {
    privateKeyObject(pem);
    return pemEncode('PRIVATE KEY', der);
  }
  return privateKeyObject(pem).export({ format: 'pem', type: 'pkcs8' }) as string;
}

/** PEM text → base64, as Talos stores certificates and keys inside YAML. */
export function toBase64Pem(pem: string): string {
  return Buffer.from(pem, 'utf8').toString('base64');
}

/** base64 → PEM text; throws when `b64` is not strict base64. */
export function fromBase64Pem(b64: string): string {
  const compact = b64.replace(/\s+/g, '');
  if (compact.length === 0 || compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) {
    throw new Error('not base64');
  }
  return Buffer.from(compact, 'base64').toString('utf8');
}
