// PEM (RFC 7468) encoding and decoding, and the base64-of-PEM form Talos keeps in its YAML files.
import { Buffer } from 'node:buffer';

export interface PemBlock {
  label: string;
  der: Buffer;
}

/** Labels Bronze accepts for a PKCS#8 private key: the standard one, and Talos's Ed25519 one. */
export const PRIVATE_KEY_LABELS = ['PRIVATE KEY', 'ED25519 PRIVATE KEY'] as const;

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

/** A private key PEM with the standard PKCS#8 label (Talos writes "ED25519 PRIVATE KEY"; OpenSSL wants this). */
export function normalizePrivateKeyPem(pem: string): string {
  return pemEncode('PRIVATE KEY', pemDecode(pem, PRIVATE_KEY_LABELS).der);
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
