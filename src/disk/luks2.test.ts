// LUKS2 against the real cryptsetup: what Bronze writes (argon2id keyslots, and the PBKDF2 ones
// it wrote before), cryptsetup opens and dumps the same master key of; what cryptsetup writes
// (argon2id, argon2i and PBKDF2 keyslots), Bronze opens; a PBKDF2 keyslot re-written as argon2id
// survives a power cut at any point of the rewrite.
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ARGON2_MEMORY_KIB, ARGON2_MIN_MEMORY_KIB, ARGON2_MIN_TIME, DATA_OFFSET, HEADER_SIZE, Luks2Error, afMerge, afSplit, calibrateArgon2, formatLuks2, isLuks, readLuks2, rewriteKeyslots, unlockLuks2, type Luks2Kdf } from './luks2.ts';

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

});

/** cryptsetup open --test-passphrase with `pass` on `file`: does the passphrase open it? */
const cryptsetupOpens = (file: string, pass: string) => spawnSync(CRYPTSETUP!, ['open', '--test-passphrase', '--key-file', '-', file], { input: pass }).status === 0;

/** Argon2id cheap enough for tests (cryptsetup's floor of 4 passes, 1 MiB). */
const FAST: Luks2Kdf = { type: 'argon2id', time: 4, memory: 1024, cpus: 1 };

/** Edits the JSON of both header copies of `file`, with their checksums made right again (a header cryptsetup might have written). */
function patchJson(file: string, edit: (json: { keyslots: Record<string, { kdf: Record<string, unknown> }> }) => void): void {
  const fd = fs.openSync(file, 'r+');
  try {
    for (const at of [0, HEADER_SIZE]) {
      const h = Buffer.alloc(HEADER_SIZE);
      fs.readSync(fd, h, 0, HEADER_SIZE, at);
      const json = JSON.parse(h.toString('utf8', 4096).replace(/\0.*$/s, ''));
      edit(json);
      h.fill(0, 4096);
      h.write(JSON.stringify(json), 4096, 'utf8');
      h.fill(0, 448, 512);
      crypto.createHash('sha256').update(h).digest().copy(h, 448);
      fs.writeSync(fd, h, 0, HEADER_SIZE, at);
    }
  } finally {
    fs.closeSync(fd);
  }
}

describe('argon2id keyslots against cryptsetup', () => {
  it('formats argon2id keyslots by default, bounded for a small node: cryptsetup opens them to the same master key', () => {
    const vol = withFd('r+', (fd) => formatLuks2(fd, 20 << 20, { keys: [{ slot: 0, passphrase: Buffer.from('node-uuidSTATE') }, { slot: 1, passphrase: Buffer.from('static-pass') }] }));
    expect(vol.kdf).toBe('argon2id');
    const { json } = withFd('r', (fd) => readLuks2(fd));
    for (const id of ['0', '1']) {
      const kdf = json.keyslots[id]!.kdf;
      expect(kdf).toMatchObject({ type: 'argon2id', salt: expect.any(String) });
      expect(kdf.memory).toBeGreaterThanOrEqual(ARGON2_MIN_MEMORY_KIB);
      expect(kdf.memory).toBeLessThanOrEqual(ARGON2_MEMORY_KIB);
      expect(kdf.time).toBeGreaterThanOrEqual(ARGON2_MIN_TIME);
      expect(kdf.cpus).toBeGreaterThanOrEqual(1);
      expect(kdf.cpus).toBeLessThanOrEqual(2);
      expect(Buffer.from(kdf.salt, 'base64')).toHaveLength(32);
    }
    const dump = execFileSync(CRYPTSETUP!, ['luksDump', img], { encoding: 'utf8' });
    expect(dump.match(/PBKDF:\s+argon2id/g)).toHaveLength(2);
    expect(dump).toMatch(new RegExp(`Memory:\\s+${json.keyslots['0']!.kdf.memory}\n`));
    expect(cryptsetupOpens(img, 'node-uuidSTATE'), 'cryptsetup open --test-passphrase').toBe(true);
    expect(cryptsetupOpens(img, 'static-pass')).toBe(true);
    expect(cryptsetupOpens(img, 'not-it')).toBe(false);
    expect(cryptsetupMasterKey('static-pass')).toBe(vol.masterKey.toString('hex'));
    const again = withFd('r', (fd) => unlockLuks2(fd, Buffer.from('static-pass')));
    expect([again.slot, again.kdf, again.masterKey.equals(vol.masterKey)]).toEqual([1, 'argon2id', true]);
  }, 120_000);

  it('calibrates passes to the time asked, and on a machine too slow for 4 passes of 64 MiB, less memory (never under 32 MiB)', () => {
    const slow = calibrateArgon2(1); // 1 ms: slower than that anywhere
    expect(slow).toEqual({ type: 'argon2id', time: ARGON2_MIN_TIME, memory: ARGON2_MIN_MEMORY_KIB, cpus: expect.any(Number) });
    const given = calibrateArgon2(1, { memory: 4096, cpus: 1 }); // a memory given is kept
    expect(given).toEqual({ type: 'argon2id', time: ARGON2_MIN_TIME, memory: 4096, cpus: 1 });
    const cheap = calibrateArgon2(2000, { memory: 1024, cpus: 1 }); // 1 MiB passes are quick: many of them
    expect(cheap.type === 'argon2id' && cheap.time).toBeGreaterThan(ARGON2_MIN_TIME);
  }, 60_000);

  it.each(['argon2id', 'argon2i'])('opens a volume cryptsetup formatted with an %s keyslot, to cryptsetup\'s master key', (pbkdf) => {
    const keyFile = path.join(dir, 'key');
    fs.writeFileSync(keyFile, 'from-cryptsetup');
    execFileSync(CRYPTSETUP!, ['luksFormat', '-q', '--type', 'luks2', '--pbkdf', pbkdf, '--pbkdf-force-iterations', '4', '--pbkdf-memory', '8192', '--pbkdf-parallel', '2', '--key-slot', '3', '--key-file', keyFile, img]);
    const vol = withFd('r', (fd) => unlockLuks2(fd, Buffer.from('from-cryptsetup')));
    expect([vol.slot, vol.kdf]).toEqual([3, pbkdf]);
    expect(vol.masterKey.toString('hex')).toBe(cryptsetupMasterKey('from-cryptsetup'));
    expect(() => withFd('r', (fd) => unlockLuks2(fd, Buffer.from('wrong')))).toThrow(/^no keyslot opens with this key$/);
  });

  it("refuses by name an Argon2 cost this machine cannot pay, or settings that are not Argon2's, without trying them", () => {
    withFd('r+', (fd) => formatLuks2(fd, 20 << 20, { keys: [{ slot: 0, passphrase: Buffer.from('k') }], kdf: FAST, digestIterations: 1000 }));
    patchJson(img, (j) => (j.keyslots['0']!.kdf.memory = 2 ** 31)); // 2 TiB
    expect(() => withFd('r', (fd) => unlockLuks2(fd, Buffer.from('k')))).toThrow(/keyslot 0: its argon2id memory cost \(2097152 MiB\) is more than half this machine's memory/);
    patchJson(img, (j) => Object.assign(j.keyslots['0']!.kdf, { memory: 1024, time: 0 }));
    expect(() => withFd('r', (fd) => unlockLuks2(fd, Buffer.from('k')))).toThrow(/keyslot 0: argon2id settings time 0, memory 1024 KiB, cpus 1 are not valid Argon2 ones/);
    patchJson(img, (j) => Object.assign(j.keyslots['0']!.kdf, { type: 'scrypt', time: 4 }));
    expect(() => withFd('r', (fd) => unlockLuks2(fd, Buffer.from('k')))).toThrow(/keyslot 0 uses scrypt; Bronze reads pbkdf2, argon2id and argon2i keyslots/);
    patchJson(img, (j) => (j.keyslots['0']!.kdf.type = 'argon2id'));
    expect(withFd('r', (fd) => unlockLuks2(fd, Buffer.from('k'))).slot).toBe(0);
  });

  it('re-writes a PBKDF2 keyslot cryptsetup made as argon2id, in the same slot; cryptsetup opens it, the old area is zeroed', () => {
    const keyFile = path.join(dir, 'key');
    fs.writeFileSync(keyFile, 'old-slot');
    execFileSync(CRYPTSETUP!, ['luksFormat', '-q', '--type', 'luks2', '--pbkdf', 'pbkdf2', '--pbkdf-force-iterations', '1000', '--key-slot', '0', '--key-file', keyFile, img]);
    const vol = withFd('r', (fd) => unlockLuks2(fd, Buffer.from('old-slot')));
    expect(vol.kdf).toBe('pbkdf2');
    const oldArea = withFd('r', (fd) => readLuks2(fd)).json.keyslots['0']!.area;
    withFd('r+', (fd) => rewriteKeyslots(fd, vol.masterKey, [], [{ slot: 0, passphrase: Buffer.from('old-slot') }], { kdf: FAST }));
    const { json } = withFd('r', (fd) => readLuks2(fd));
    expect(Object.keys(json.keyslots)).toEqual(['0']);
    expect(json.keyslots['0']!.kdf).toMatchObject({ type: 'argon2id', time: 4, memory: 1024, cpus: 1 });
    expect(json.keyslots['0']!.area.offset, 'written elsewhere first').not.toBe(oldArea.offset);
    const old = Buffer.alloc(Number(oldArea.size));
    withFd('r', (fd) => fs.readSync(fd, old, 0, old.length, Number(oldArea.offset)));
    expect(old.every((b) => b === 0), 'the PBKDF2 area is zeroed once the header no longer names it').toBe(true);
    expect(execFileSync(CRYPTSETUP!, ['luksDump', img], { encoding: 'utf8' })).toMatch(/PBKDF:\s+argon2id/);
    expect(cryptsetupOpens(img, 'old-slot')).toBe(true);
    expect(cryptsetupMasterKey('old-slot')).toBe(vol.masterKey.toString('hex'));
    expect(withFd('r', (fd) => unlockLuks2(fd, Buffer.from('old-slot'))).kdf).toBe('argon2id');
  });

  it('a power cut at any point of that rewrite leaves a volume the passphrase opens, in Bronze and in cryptsetup', () => {
    withFd('r+', (fd) => formatLuks2(fd, 20 << 20, { keys: [{ slot: 0, passphrase: Buffer.from('pw') }], iterations: 1000 }));
    const before = fs.readFileSync(img);
    const key = withFd('r', (fd) => unlockLuks2(fd, Buffer.from('pw'))).masterKey;
    withFd('r+', (fd) => rewriteKeyslots(fd, key, [], [{ slot: 0, passphrase: Buffer.from('pw') }], { kdf: FAST }));
    const after = fs.readFileSync(img);
    const area = withFd('r', (fd) => readLuks2(fd)).json.keyslots['0']!.area;
    const span = (buf: Buffer, from: number, to: number) => [from, buf.subarray(from, to)] as const;
    // What the disk holds after each write of the rewrite, cut off there: the new area, then the
    // secondary header (torn, then whole), then the primary (torn, then whole), then the zeroing.
    const steps: Array<[string, ReadonlyArray<readonly [number, Buffer]>]> = [
      ['new area written', [span(after, Number(area.offset), Number(area.offset) + Number(area.size))]],
      ['secondary header torn', [span(after, HEADER_SIZE, HEADER_SIZE + 2048)]],
      ['secondary header written', [span(after, HEADER_SIZE, 2 * HEADER_SIZE)]],
      ['primary header torn', [span(after, 0, 2048)]],
      ['primary header written', [span(after, 0, HEADER_SIZE)]],
    ];
    const disk = Buffer.from(before);
    for (const [what, writes] of steps) {
      for (const [at, bytes] of writes) bytes.copy(disk, at);
      fs.writeFileSync(img, disk);
      const v = withFd('r', (fd) => unlockLuks2(fd, Buffer.from('pw')));
      expect(v.masterKey.equals(key), what).toBe(true);
      const copy = path.join(dir, 'copy.img');
      fs.writeFileSync(copy, disk); // cryptsetup may repair a header: on a copy
      expect(cryptsetupOpens(copy, 'pw'), `cryptsetup after: ${what}`).toBe(true);
    }
    expect(disk.equals(after), 'the steps end where the rewrite did, but for the old area').toBe(false);
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
