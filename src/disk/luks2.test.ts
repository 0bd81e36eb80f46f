// LUKS2 against the real cryptsetup: what Bronze writes, cryptsetup opens and dumps the same
// master key of; what cryptsetup writes (PBKDF2 keyslots), Bronze opens.
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATA_OFFSET, Luks2Error, afMerge, afSplit, formatLuks2, isLuks, readLuks2, rewriteKeyslots, unlockLuks2 } from './luks2.ts';

const CRYPTSETUP = ['/usr/sbin/cryptsetup', '/sbin/cryptsetup'].find((p) => fs.existsSync(p));
// scripts/deps.sh installs it: a missing one is a setup error, not a reason to skip.
if (!CRYPTSETUP) throw new Error('cryptsetup is missing: run scripts/deps.sh (package cryptsetup-bin)');

let dir: string;
let img: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'luks2-'));
  img = path.join(dir, 'vol.img');
  fs.writeFileSync(img, '');
  fs.truncateSync(img, 20 << 20);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const withFd = <T>(mode: string, f: (fd: number) => T): T => {
  const fd = fs.openSync(img, mode);
  try {
    return f(fd);
  } finally {
    fs.closeSync(fd);
  }
};

/** cryptsetup's view of the master key, opened with `pass`: the hex of luksDump --dump-volume-key. */
function cryptsetupMasterKey(pass: string): string {
  const keyFile = path.join(dir, 'key');
  fs.writeFileSync(keyFile, pass);
  const out = execFileSync(CRYPTSETUP!, ['luksDump', '-q', '--dump-volume-key', '--key-file', keyFile, img], { encoding: 'utf8' });
  const dump = out.slice(out.indexOf('MK dump:') + 'MK dump:'.length);
  return dump.replace(/[^0-9a-f]/g, '');
}

describe('AF split', () => {
  it('merges back to the key, and any damaged stripe loses it', () => {
    const key = crypto.randomBytes(64);
    const split = afSplit(key, 4000, 'sha256');
    expect(split.length).toBe(64 * 4000);
    expect(afMerge(split, 64, 4000, 'sha256').equals(key)).toBe(true);
    split[1234] = split[1234]! ^ 1;
    expect(afMerge(split, 64, 4000, 'sha256').equals(key)).toBe(false);
  });
});

describe('LUKS2 against cryptsetup', () => {
  it('a volume Bronze formats opens in cryptsetup with each key, to the same master key', () => {
    const vol = withFd('r+', (fd) =>
      formatLuks2(fd, 20 << 20, { keys: [{ slot: 3, passphrase: Buffer.from('static-pass') }, { slot: 0, passphrase: Buffer.from('node-uuidSTATE') }], iterations: 1000 }),
    );
    const dump = execFileSync(CRYPTSETUP!, ['luksDump', img], { encoding: 'utf8' });
    expect(dump).toMatch(/Version:\s+2/);
    expect(dump).toContain(vol.uuid);
    expect(dump).toMatch(/offset: 16777216 \[bytes\]/);
    expect(dump).toMatch(/\n {2}0: luks2/);
    expect(dump).toMatch(/\n {2}3: luks2/);
    expect(cryptsetupMasterKey('static-pass')).toBe(vol.masterKey.toString('hex'));
    expect(cryptsetupMasterKey('node-uuidSTATE')).toBe(vol.masterKey.toString('hex'));
    const wrong = spawnSync(CRYPTSETUP!, ['open', '--test-passphrase', '--key-file', '-', img], { input: 'not-it' });
    expect(wrong.status).not.toBe(0);
    // And Bronze reads its own volume back, from either slot.
    const again = withFd('r', (fd) => unlockLuks2(fd, Buffer.from('static-pass')));
    expect(again.masterKey.equals(vol.masterKey)).toBe(true);
    expect(again.slot).toBe(3);
    expect(again.dataOffset).toBe(DATA_OFFSET);
  });

  it('a 4096-byte sector size and AES-128-XTS are what cryptsetup reports', () => {
    withFd('r+', (fd) => formatLuks2(fd, 20 << 20, { keys: [{ slot: 1, passphrase: Buffer.from('p') }], iterations: 1000, sectorSize: 4096, keySize: 32 }));
    const dump = execFileSync(CRYPTSETUP!, ['luksDump', img], { encoding: 'utf8' });
    expect(dump).toMatch(/sector: 4096 \[bytes\]/);
    expect(dump).toMatch(/Key:\s+256 bits/);
    expect(cryptsetupMasterKey('p')).toHaveLength(64);
  });

  it('rewrites keyslots: kept ones open as before, replaced and removed ones no longer open, new ones open to the same key', () => {
    const vol = withFd('r+', (fd) => formatLuks2(fd, 20 << 20, { keys: [{ slot: 0, passphrase: Buffer.from('a') }, { slot: 1, passphrase: Buffer.from('b') }], iterations: 1000 }));
    const key = vol.masterKey.toString('hex');
    withFd('r+', (fd) => rewriteKeyslots(fd, vol.masterKey, [0], [{ slot: 1, passphrase: Buffer.from('c') }, { slot: 4, passphrase: Buffer.from('d') }], { iterations: 1000 }));
    const dump = execFileSync(CRYPTSETUP!, ['luksDump', img], { encoding: 'utf8' });
    expect([...dump.matchAll(/\n {2}(\d+): luks2/g)].map((m) => m[1])).toEqual(['0', '1', '4']);
    expect(cryptsetupMasterKey('a')).toBe(key);
    expect(cryptsetupMasterKey('c')).toBe(key);
    expect(cryptsetupMasterKey('d')).toBe(key);
    expect(spawnSync(CRYPTSETUP!, ['open', '--test-passphrase', '--key-file', '-', img], { input: 'b' }).status, 'the replaced passphrase').not.toBe(0);
    // Everything replaced: only the new key opens it.
    withFd('r+', (fd) => rewriteKeyslots(fd, vol.masterKey, [], [{ slot: 2, passphrase: Buffer.from('e') }], { iterations: 1000 }));
    expect(cryptsetupMasterKey('e')).toBe(key);
    for (const gone of ['a', 'c', 'd']) expect(spawnSync(CRYPTSETUP!, ['open', '--test-passphrase', '--key-file', '-', img], { input: gone }).status, gone).not.toBe(0);
    expect(withFd('r', (fd) => readLuks2(fd)).seqid).toBe(3n);
    // Not the volume's key, or no keyslot left: refused, and the volume is as it was.
    const before = fs.readFileSync(img);
    expect(() => withFd('r+', (fd) => rewriteKeyslots(fd, Buffer.alloc(64, 1), [2], [{ slot: 3, passphrase: Buffer.from('f') }], { iterations: 1000 }))).toThrow(/not this volume's master key/);
    expect(() => withFd('r+', (fd) => rewriteKeyslots(fd, vol.masterKey, [], [], { iterations: 1000 }))).toThrow(/without a keyslot/);
    expect(fs.readFileSync(img).equals(before)).toBe(true);
  });

  it('gives a device that does not end on a whole 4096-byte sector a fixed data size, which cryptsetup takes', () => {
    fs.truncateSync(img, (20 << 20) + 1536);
    const vol = withFd('r+', (fd) => formatLuks2(fd, (20 << 20) + 1536, { keys: [{ slot: 0, passphrase: Buffer.from('p') }], iterations: 1000, sectorSize: 4096 }));
    expect(vol.dataSize).toBe(4 << 20);
    expect(execFileSync(CRYPTSETUP!, ['luksDump', img], { encoding: 'utf8' })).toMatch(/length: 4194304 \[bytes\]/);
    expect(cryptsetupMasterKey('p')).toBe(vol.masterKey.toString('hex'));
    expect(withFd('r', (fd) => unlockLuks2(fd, Buffer.from('p'))).dataSize).toBe(4 << 20);
  });

  it('opens a volume cryptsetup formatted with a PBKDF2 keyslot, to cryptsetup\'s master key', () => {
    const keyFile = path.join(dir, 'key');
    fs.writeFileSync(keyFile, 'from-cryptsetup');
    execFileSync(CRYPTSETUP!, ['luksFormat', '-q', '--type', 'luks2', '--pbkdf', 'pbkdf2', '--pbkdf-force-iterations', '1000', '--key-slot', '5', '--key-file', keyFile, img]);
    const vol = withFd('r', (fd) => unlockLuks2(fd, Buffer.from('from-cryptsetup')));
    expect(vol.masterKey.toString('hex')).toBe(cryptsetupMasterKey('from-cryptsetup'));
    expect(vol.slot).toBe(5);
    expect(() => withFd('r', (fd) => unlockLuks2(fd, Buffer.from('wrong')))).toThrow(/no keyslot opens with this key/);
  });

  it('names an argon2id keyslot it cannot open rather than calling the key wrong', () => {
    const keyFile = path.join(dir, 'key');
    fs.writeFileSync(keyFile, 'k');
    execFileSync(CRYPTSETUP!, ['luksFormat', '-q', '--type', 'luks2', '--pbkdf', 'argon2id', '--pbkdf-force-iterations', '4', '--pbkdf-memory', '32', '--key-file', keyFile, img]);
    expect(() => withFd('r', (fd) => unlockLuks2(fd, Buffer.from('k')))).toThrow(/keyslot 0 uses argon2id, and Bronze reads pbkdf2 keyslots only/);
  });
});

describe('LUKS2 headers', () => {
  it('falls back to the secondary header when the primary is damaged, and refuses when both are', () => {
    const vol = withFd('r+', (fd) => formatLuks2(fd, 20 << 20, { keys: [{ slot: 0, passphrase: Buffer.from('x') }], iterations: 1000 }));
    withFd('r+', (fd) => fs.writeSync(fd, Buffer.alloc(512, 0xff), 0, 512, 600)); // inside the primary's binary header
    expect(withFd('r', (fd) => unlockLuks2(fd, Buffer.from('x'))).masterKey.equals(vol.masterKey)).toBe(true);
    withFd('r+', (fd) => fs.writeSync(fd, Buffer.alloc(512, 0xff), 0, 512, 16384 + 600));
    expect(() => withFd('r', (fd) => readLuks2(fd))).toThrow(/not a LUKS2 volume: header checksum mismatch/);
  });

  it('knows a LUKS header by its magic', () => {
    withFd('r+', (fd) => formatLuks2(fd, 20 << 20, { keys: [{ slot: 0, passphrase: Buffer.from('x') }], iterations: 1000 }));
    const head = withFd('r', (fd) => {
      const b = Buffer.alloc(512);
      fs.readSync(fd, b, 0, 512, 0);
      return b;
    });
    expect(isLuks(head)).toBe(true);
    expect(isLuks(Buffer.from('XFSB\0\0\0\0'))).toBe(false);
  });

  it('refuses bad keys and sizes by name, writing nothing', () => {
    const f = (o: Parameters<typeof formatLuks2>[2], size = 20 << 20) => withFd('r+', (fd) => formatLuks2(fd, size, o));
    expect(() => f({ keys: [] })).toThrow(Luks2Error);
    expect(() => f({ keys: [{ slot: 32, passphrase: Buffer.from('x') }] })).toThrow(/keyslot 32 is not one of LUKS2's 0–31/);
    expect(() => f({ keys: [{ slot: 1, passphrase: Buffer.from('x') }, { slot: 1, passphrase: Buffer.from('y') }] })).toThrow(/keyslot 1 is given twice/);
    expect(() => f({ keys: [{ slot: 0, passphrase: Buffer.alloc(0) }] })).toThrow(/keyslot 0: the passphrase is empty/);
    expect(() => f({ keys: [{ slot: 0, passphrase: Buffer.from('x') }] }, 8 << 20)).toThrow(/too small/);
    expect(fs.readFileSync(img).every((b) => b === 0)).toBe(true);
  });
});

describe('LUKS2 keyslot choice', () => {
  it('with a slot, tries that keyslot alone', () => {
    withFd('r+', (fd) => formatLuks2(fd, 20 << 20, { keys: [{ slot: 0, passphrase: Buffer.from('a') }, { slot: 2, passphrase: Buffer.from('b') }], iterations: 1000 }));
    expect(withFd('r', (fd) => unlockLuks2(fd, Buffer.from('b'), 2)).slot).toBe(2);
    expect(() => withFd('r', (fd) => unlockLuks2(fd, Buffer.from('b'), 0))).toThrow(/no keyslot opens with this key/);
    expect(() => withFd('r', (fd) => unlockLuks2(fd, Buffer.from('b'), 5))).toThrow(/keyslot 5 is not in use \(in use: 0, 2\)/);
  });
});
