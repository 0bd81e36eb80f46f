import { describe, expect, it } from 'vitest';
import { generateKeyPairSync, sign, verify, createPrivateKey } from 'node:crypto';
import { generateKeyPair, importPrivateKey, importPublicKey, privateKeyToPem, publicKeyToPem } from './keys.ts';
import { pemDecode, pemEncode } from './pem.ts';
import { webcrypto } from './x509.ts';

describe('keys', () => {
  it('generates Ed25519 keys and round-trips them through PEM', async () => {
    const kp = await generateKeyPair();
    expect(kp.privateKey.algorithm.name).toBe('Ed25519');
    const priv = await privateKeyToPem(kp.privateKey);
    const pub = await publicKeyToPem(kp.publicKey);
    expect(priv).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(pub).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    const back = await importPrivateKey(priv);
    // The derived public key is the original one.
    expect(await publicKeyToPem(back.publicKey)).toBe(pub);
    const msg = new TextEncoder().encode('bronze');
    const sig = await webcrypto.subtle.sign('Ed25519', back.privateKey, msg);
    expect(await webcrypto.subtle.verify('Ed25519', await importPublicKey(pub), sig, msg)).toBe(true);
    // Node's own crypto reads the PEM too.
    expect(verify(null, Buffer.from(msg), pub, sign(null, Buffer.from(msg), createPrivateKey(priv)))).toBe(true);
  });

  it('accepts Talos "ED25519 PRIVATE KEY" PEM', async () => {
    const kp = await generateKeyPair();
    const der = pemDecode(await privateKeyToPem(kp.privateKey), ['PRIVATE KEY']).der;
    const back = await importPrivateKey(pemEncode('ED25519 PRIVATE KEY', der));
    expect(await publicKeyToPem(back.publicKey)).toBe(await publicKeyToPem(kp.publicKey));
  });

  it('imports Talos ECDSA (SEC1) and RSA (PKCS#1) keys with the algorithm Go signs with', async () => {
    const cases = [
      [generateKeyPairSync('ec', { namedCurve: 'P-256' }), 'sec1', { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }],
      [generateKeyPairSync('ec', { namedCurve: 'P-384' }), 'sec1', { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' }],
      [generateKeyPairSync('rsa', { modulusLength: 2048 }), 'pkcs1', { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }],
    ] as const;
    for (const [pair, type, algorithm] of cases) {
      const back = await importPrivateKey(pair.privateKey.export({ format: 'pem', type }) as string);
      expect(back.algorithm).toEqual(algorithm);
      const msg = Buffer.from('bronze');
      const params = algorithm.name === 'ECDSA' ? { name: 'ECDSA', hash: algorithm.hash } : algorithm;
      const sig = Buffer.from(await webcrypto.subtle.sign(params, back.privateKey, msg));
      // Node verifies the WebCrypto signature with the original public key (ECDSA in IEEE P1363 form).
      const dsa = algorithm.name === 'ECDSA' ? { dsaEncoding: 'ieee-p1363' as const } : {};
      expect(verify(algorithm.hash, msg, { key: pair.publicKey, ...dsa }, sig)).toBe(true);
      const pub = pair.publicKey.export({ format: 'pem', type: 'spki' }) as string;
      expect(await webcrypto.subtle.verify(params, await importPublicKey(pub), sig, msg)).toBe(true);
    }
  });

  it('rejects other key types and garbage', async () => {
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
    await expect(importPrivateKey(k1.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string)).rejects.toThrow(/curve secp256k1/);
    await expect(importPublicKey(k1.publicKey.export({ format: 'pem', type: 'spki' }) as string)).rejects.toThrow(/curve secp256k1/);
    await expect(importPrivateKey('nope')).rejects.toThrow(/no PEM block/);
  });
});
