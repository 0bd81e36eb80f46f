import { describe, expect, it } from 'vitest';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { fromBase64Pem, normalizePrivateKeyPem, pemDecode, pemDecodeAll, pemEncode, privateKeyObject, toBase64Pem } from './pem.ts';

describe('pem', () => {
  const der = Buffer.from(Array.from({ length: 100 }, (_, i) => i));

  it('round-trips with 64-column lines', () => {
    const pem = pemEncode('CERTIFICATE', der);
    expect(pem.startsWith('-----BEGIN CERTIFICATE-----\n')).toBe(true);
    expect(pem.endsWith('-----END CERTIFICATE-----\n')).toBe(true);
    for (const line of pem.trim().split('\n')) expect(line.length).toBeLessThanOrEqual(64);
    const b = pemDecode(pem, ['CERTIFICATE']);
    expect(b.label).toBe('CERTIFICATE');
    expect(b.der.equals(der)).toBe(true);
  });

  it('accepts CRLF and surrounding text, finds every block', () => {
    const two = 'junk\r\n' + pemEncode('A', der).replace(/\n/g, '\r\n') + 'between\n' + pemEncode('B', der.subarray(1));
    const blocks = pemDecodeAll(two);
    expect(blocks.map((b) => b.label)).toEqual(['A', 'B']);
    expect(blocks[1]!.der.equals(der.subarray(1))).toBe(true);
  });

  it('names what is wrong', () => {
    expect(() => pemDecode('hello', ['CERTIFICATE'])).toThrow(/no PEM block/);
    expect(() => pemDecode(pemEncode('PUBLIC KEY', der), ['CERTIFICATE'])).toThrow(/"PUBLIC KEY", want CERTIFICATE/);
    expect(() => pemDecode(pemEncode('A', der) + pemEncode('A', der), ['A'])).toThrow(/2 PEM blocks/);
    expect(() => pemDecodeAll('-----BEGIN A-----\nAAA\n-----END A-----')).toThrow(/invalid base64/);
    expect(() => pemDecodeAll('-----BEGIN A-----\nAAAA\n-----END B-----')).toThrow(/ends with "B"/);
  });

  it('normalises Talos ED25519 PRIVATE KEY label', () => {
    const key = generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' });
    const talos = pemEncode('ED25519 PRIVATE KEY', key);
    expect(normalizePrivateKeyPem(talos)).toBe(pemEncode('PRIVATE KEY', key));
  });

  it('reads SEC1 EC keys on P-256 and P-384 and PKCS#1 RSA keys, as PKCS#8', () => {
    const cases = [
      ['EC PRIVATE KEY', generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, 'sec1'],
      ['EC PRIVATE KEY', generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey, 'sec1'],
      ['RSA PRIVATE KEY', generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'pkcs1'],
    ] as const;
    for (const [label, key, type] of cases) {
      const pem = key.export({ format: 'pem', type }) as string;
      expect(pem.startsWith(`-----BEGIN ${label}-----`)).toBe(true);
      expect(privateKeyObject(pem).equals(key)).toBe(true);
      const norm = normalizePrivateKeyPem(pem);
      expect(norm.startsWith('-----BEGIN PRIVATE KEY-----')).toBe(true);
      expect(createPrivateKey(norm).equals(key)).toBe(true);
    }
  });

  it('refuses EC curves other than P-256 and P-384, and key types Bronze cannot sign with', () => {
    const k256 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey.export({ format: 'pem', type: 'sec1' }) as string;
    expect(() => normalizePrivateKeyPem(k256)).toThrow(/curve secp256k1: Bronze accepts P-256 and P-384/);
    const x448 = generateKeyPairSync('x448').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    expect(() => normalizePrivateKeyPem(x448)).toThrow(/private key is x448/);
    expect(() => normalizePrivateKeyPem(pemEncode('EC PRIVATE KEY', der))).toThrow(/holds no valid private key/);
  });

  it('base64-of-PEM round-trips and rejects non-base64', () => {
    const pem = pemEncode('CERTIFICATE', der);
    const b64 = toBase64Pem(pem);
    expect(b64).toMatch(/^LS0tLS1CRUdJTi/);
    expect(fromBase64Pem(b64)).toBe(pem);
    expect(() => fromBase64Pem('not base64!')).toThrow(/not base64/);
    expect(() => fromBase64Pem('')).toThrow(/not base64/);
  });
});
