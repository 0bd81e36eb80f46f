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

  it('rejects other key types and garbage', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ecPriv = ec.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const ecPub = ec.publicKey.export({ format: 'pem', type: 'spki' }) as string;
    await expect(importPrivateKey(ecPriv)).rejects.toThrow(/is ec, want ed25519/);
    await expect(importPublicKey(ecPub)).rejects.toThrow(/is ec, want ed25519/);
    await expect(importPrivateKey('nope')).rejects.toThrow(/no PEM block/);
  });
});
