// machine.systemDiskEncryption's pieces that run without device-mapper (this host has none):
// Talos's nodeID key, dm-crypt's table line, the settings read from a configuration and kept in
// META, what a volume starts with, and the keyslot sync (with PBKDF2 keyslots re-written as
// argon2id, checked with Debian's cryptsetup). Opening and mapping run under QEMU
// (test/e2e/encryption.test.ts).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatLuks2, readLuks2, unlockLuks2, type Luks2Kdf } from '../disk/luks2.ts';
import { META_SIZE, MetaStore } from '../install/meta.ts';
import {
  cryptTarget,
  eraseVolume,
  keyMaterial,
  nodeIdPassphrase,
  recordStateEncryption,
  recordedStateEncryption,
  META_STATE_ENCRYPTION_PENDING,
  stateEncryptionAtBoot,
  syncEncryptedKeys,
  syncStateEncryption,
  volumeContent,
} from './encryption.ts';
import { systemDiskEncryptionOf } from '../config/accessors/encryption.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-encryption-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function sysWithUuid(uuid: string | undefined): string {
  const sys = path.join(dir, `sys-${uuid ?? 'none'}`);
  fs.mkdirSync(path.join(sys, 'class/dmi/id'), { recursive: true });
  if (uuid !== undefined) fs.writeFileSync(path.join(sys, 'class/dmi/id/product_uuid'), `${uuid}\n`);
  return sys;
}

const UUID = '4C4C4544-0031-3510-8052-B3C04F4C4332';
/** Argon2id cheap enough for tests (cryptsetup's floor of 4 passes, 1 MiB). */
const FAST: Luks2Kdf = { type: 'argon2id', time: 4, memory: 1024, cpus: 1 };
const CRYPTSETUP = ['/usr/sbin/cryptsetup', '/sbin/cryptsetup'].find((p) => fs.existsSync(p));
// scripts/deps.sh installs it: a missing one is a setup error, not a reason to skip.
if (!CRYPTSETUP) throw new Error('cryptsetup is missing: run scripts/deps.sh (package cryptsetup-bin)');

describe('nodeID keys (Talos: the SMBIOS UUID, then the label)', () => {
  it('is the lower-case UUID followed by the label', () => {
    expect(nodeIdPassphrase('STATE', sysWithUuid(UUID)).toString()).toBe('4c4c4544-0031-3510-8052-b3c04f4c4332STATE');
    expect(nodeIdPassphrase('EPHEMERAL', sysWithUuid(UUID)).toString()).toBe('4c4c4544-0031-3510-8052-b3c04f4c4332EPHEMERAL');
  });

  it('refuses a machine without a UUID, or with one a key would be guessed from', () => {
    expect(() => nodeIdPassphrase('STATE', sysWithUuid(undefined))).toThrow(/machine UUID is not populated.*-uuid/);
    expect(() => nodeIdPassphrase('STATE', sysWithUuid('00000000-0000-0000-0000-000000000000'))).toThrow(/not populated/);
    expect(() => nodeIdPassphrase('STATE', sysWithUuid('11111111-1111-1111-1111-111111111112'))).toThrow(/entropy check failed/);
    // The UUID is the key's only secret-looking ingredient: never in a message that gets logged.
    let message = '';
    try {
      nodeIdPassphrase('STATE', sysWithUuid('11111111-1111-1111-1111-111111111112'));
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/the SMBIOS UUID repeats one character too often/);
    expect(message).not.toMatch(/1111-1111/);
  });

  it('gives each key its passphrase, in slot order', () => {
    const keys = keyMaterial({ keys: [{ slot: 3, static: { passphrase: 'pw' } }, { slot: 1, nodeID: {} }] }, 'STATE', sysWithUuid(UUID));
    expect(keys.map((k) => [k.slot, k.kind, k.passphrase.toString()])).toEqual([
      [1, 'nodeID', '4c4c4544-0031-3510-8052-b3c04f4c4332STATE'],
      [3, 'static', 'pw'],
    ]);
  });
});

describe("dm-crypt's table line", () => {
  const key = Buffer.from('00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff', 'hex');
  it('maps the data after the 16 MiB header, with the key in hex', () => {
    const t = cryptTarget({ cipher: 'aes-xts-plain64', masterKey: key, dataOffset: 16 << 20, sectorSize: 512 }, '/dev/vda6', 100 << 20);
    expect(t).toEqual({ type: 'crypt', length: (84 << 20) / 512, params: `aes-xts-plain64 ${key.toString('hex')} 0 /dev/vda6 32768` });
  });

  it('passes the sector size and the performance options as optional arguments', () => {
    const t = cryptTarget({ cipher: 'aes-xts-plain64', masterKey: key, dataOffset: 16 << 20, sectorSize: 4096 }, '/dev/vda6', (100 << 20) + 1024, ['no_read_workqueue', 'same_cpu_crypt']);
    // A partial 4096-byte sector at the end is left out.
    expect(t.length).toBe((84 << 20) / 512);
    expect(t.params).toMatch(/ 0 \/dev\/vda6 32768 3 sector_size:4096 no_read_workqueue same_cpu_crypt$/);
  });

  it('refuses a device with no room after the header', () => {
    expect(() => cryptTarget({ cipher: 'aes-xts-plain64', masterKey: key, dataOffset: 16 << 20, sectorSize: 512 }, '/dev/x', 16 << 20)).toThrow(/no room for data/);
  });
});

describe('the settings', () => {
  it('reads machine.systemDiskEncryption from a configuration, through the schema', () => {
    const text = 'version: v1alpha1\nmachine:\n  type: worker\n  systemDiskEncryption:\n    ephemeral:\n      keys:\n        - nodeID: {}\n          slot: 0\n      options: [no_read_workqueue]\n';
    expect(systemDiskEncryptionOf(text)).toEqual({ ephemeral: { keys: [{ nodeID: {}, slot: 0 }], options: ['no_read_workqueue'] } });
    expect(systemDiskEncryptionOf('version: v1alpha1\nmachine:\n  type: worker\n')).toBeUndefined();
    expect(systemDiskEncryptionOf(undefined)).toBeUndefined();
    expect(() => systemDiskEncryptionOf(text.replace('slot: 0', 'slot: 40'))).toThrow(/40 is not a valid LUKS2 key slot/);
    // Talos v1.10+: a VolumeConfig's encryption.
    const volumeConfig = 'version: v1alpha1\nmachine:\n  type: worker\n---\napiVersion: v1alpha1\nkind: VolumeConfig\nname: STATE\nencryption:\n  provider: luks2\n  keys:\n    - static:\n        passphrase: p\n      slot: 2\n';
    expect(systemDiskEncryptionOf(volumeConfig)).toEqual({ state: { provider: 'luks2', keys: [{ static: { passphrase: 'p' }, slot: 2 }] } });
  });

  it("keeps STATE's settings in META, syncing an encrypted STATE's keyslots before the record follows the configuration", () => {
    const meta = path.join(dir, 'meta');
    fs.writeFileSync(meta, Buffer.alloc(META_SIZE));
    const cfg = { keys: [{ slot: 0, nodeID: {} }] };
    expect(recordedStateEncryption(meta)).toBeUndefined();
    expect(recordStateEncryption(meta, cfg)).toBe(true);
    expect(recordStateEncryption(meta, cfg)).toBe(false);
    expect(recordedStateEncryption(meta)).toEqual(cfg);
    const pending = () => {
      const store = MetaStore.open(meta);
      try {
        return store.get(META_STATE_ENCRYPTION_PENDING);
      } finally {
        store.close();
      }
    };

    const lines: string[] = [];
    const log = { info: (m: string) => lines.push(`info: ${m}`), warn: (m: string) => lines.push(`warn: ${m}`), error: (m: string) => lines.push(`error: ${m}`) };
    const other = 'version: v1alpha1\nmachine:\n  type: worker\n  systemDiskEncryption:\n    state:\n      keys:\n        - static:\n            passphrase: new\n          slot: 1\n';
    const want = { keys: [{ slot: 1, static: { passphrase: 'new' } }] };
    // Encrypted STATE whose keyslots cannot be synced: the record stays, since it opens STATE.
    const calls: unknown[][] = [];
    syncStateEncryption(log, { metaDevice: meta, device: '/dev/vda5', encrypted: true }, other, (...a) => {
      calls.push(a);
      expect(pending(), 'the settings being synced to are recorded first').toBe(JSON.stringify(want));
      throw new Error('no keyslot opens with this key');
    });
    expect(calls).toEqual([['/dev/vda5', 'STATE', cfg, want]]);
    expect(recordedStateEncryption(meta)).toEqual(cfg);
    expect(pending()).toBeUndefined();
    expect(lines.join('\n')).toMatch(/error: STATE's keyslots are not all synced .*no keyslot opens.*META keeps the settings that open it/);
    // A key that could not be made: the same.
    syncStateEncryption(log, { metaDevice: meta, device: '/dev/vda5', encrypted: true }, other, () => ({ synced: ['slot 1 (static) added'], failedSyncs: ['slot 0: machine UUID is not populated'] }));
    expect(recordedStateEncryption(meta)).toEqual(cfg);
    // Synced: the record follows.
    lines.length = 0;
    syncStateEncryption(log, { metaDevice: meta, device: '/dev/vda5', encrypted: true }, other, () => ({ synced: ['slot 1 (static) added', 'slot 0 removed'], failedSyncs: [] }));
    expect(recordedStateEncryption(meta)).toEqual(want);
    expect(pending()).toBeUndefined();
    expect(lines.join('\n')).toMatch(/info: STATE's keyslots synced with the configuration: slot 1 \(static\) added, slot 0 removed/);
    // A configuration without STATE's encryption does not make an encrypted STATE unopenable.
    lines.length = 0;
    syncStateEncryption(log, { metaDevice: meta, device: '/dev/vda5', encrypted: true }, 'version: v1alpha1\nmachine:\n  type: worker\n', () => {
      throw new Error('not called');
    });
    expect(recordedStateEncryption(meta)).toEqual(want);
    expect(lines.join('\n')).toMatch(/warn: STATE is encrypted, and the configuration no longer says so/);
    // Unencrypted STATE: no record (the next boot would refuse to mount it), an error saying how.
    recordStateEncryption(meta, undefined);
    lines.length = 0;
    syncStateEncryption(log, { metaDevice: meta, encrypted: false }, other);
    expect(recordedStateEncryption(meta)).toBeUndefined();
    expect(lines.join('\n')).toMatch(/error: the configuration asks for STATE encrypted, but STATE is not/);
  });

  it('settles a pending record at boot by what opens STATE', () => {
    const meta = path.join(dir, 'meta');
    fs.writeFileSync(meta, Buffer.alloc(META_SIZE));
    const vol = path.join(dir, 'state');
    fs.writeFileSync(vol, Buffer.alloc(20 << 20));
    const fd = fs.openSync(vol, 'r+');
    formatLuks2(fd, 20 << 20, { keys: [{ slot: 1, passphrase: Buffer.from('new') }], iterations: 1000 });
    fs.closeSync(fd);
    const old = { keys: [{ slot: 1, static: { passphrase: 'old' } }] };
    const now = { keys: [{ slot: 1, static: { passphrase: 'new' } }] };
    // The power went after the keyslots were rewritten, before the record followed.
    recordStateEncryption(meta, old);
    const store = MetaStore.open(meta);
    store.set({ [META_STATE_ENCRYPTION_PENDING]: JSON.stringify(now) });
    store.close();
    expect(stateEncryptionAtBoot(meta, vol)).toEqual(now);
    const after = MetaStore.open(meta);
    expect(after.get(META_STATE_ENCRYPTION_PENDING)).toBeUndefined();
    after.close();
  });
});

describe('what a volume starts with', () => {
  it('tells LUKS, blank and anything else apart', () => {
    const f = path.join(dir, 'vol');
    fs.writeFileSync(f, Buffer.alloc(20 << 20));
    expect(volumeContent(f)).toBe('blank');
    const fd = fs.openSync(f, 'r+');
    formatLuks2(fd, 20 << 20, { keys: [{ slot: 0, passphrase: Buffer.from('x') }], iterations: 1000 });
    fs.closeSync(fd);
    expect(volumeContent(f)).toBe('luks');
    fs.writeFileSync(f, Buffer.concat([Buffer.from('XFSB'), Buffer.alloc(1 << 20)]));
    expect(volumeContent(f)).toBe('other');
    // What a wipe leaves.
    fs.writeFileSync(f, Buffer.alloc(20 << 20, 0x5a));
    eraseVolume(f);
    expect(volumeContent(f)).toBe('erased');
    expect(fs.readFileSync(f).subarray(4096, 16 << 20).every((b) => b === 0)).toBe(true);
    // Zeroes at the start but not through the first MiB: not blank (a damaged xfs, maybe).
    fs.writeFileSync(f, Buffer.concat([Buffer.alloc(512 << 10), Buffer.from('data'), Buffer.alloc(1 << 20)]));
    expect(volumeContent(f)).toBe('other');
  });
});

describe('keyslot sync (what Talos does at each open)', () => {
  it('adds configured keys, replaces changed ones, removes the rest, and reports keys it cannot make', () => {
    const sys = sysWithUuid(UUID);
    const vol = path.join(dir, 'vol');
    fs.writeFileSync(vol, Buffer.alloc(20 << 20));
    const fd = fs.openSync(vol, 'r+');
    const made = formatLuks2(fd, 20 << 20, { keys: [{ slot: 0, passphrase: nodeIdPassphrase('EPHEMERAL', sys) }], kdf: FAST, digestIterations: 1000 });
    fs.closeSync(fd);
    const key = made.masterKey.toString('hex');
    const opens = (pass: string, slot?: number) => {
      const f = fs.openSync(vol, 'r');
      try {
        return unlockLuks2(f, Buffer.from(pass), slot).masterKey.toString('hex') === key;
      } catch {
        return false;
      } finally {
        fs.closeSync(f);
      }
    };
    const nodeId = { slot: 0, nodeID: {} };
    expect(syncEncryptedKeys(vol, 'EPHEMERAL', { keys: [nodeId] }, { keys: [nodeId] }, { sysRoot: sys, kdf: FAST })).toEqual({ synced: [], failedSyncs: [] });
    expect(syncEncryptedKeys(vol, 'EPHEMERAL', { keys: [nodeId] }, { keys: [nodeId, { slot: 1, static: { passphrase: 'pw' } }] }, { sysRoot: sys, kdf: FAST })).toEqual({ synced: ['slot 1 (static) added'], failedSyncs: [] });
    expect(opens('pw', 1)).toBe(true);
    expect(syncEncryptedKeys(vol, 'EPHEMERAL', { keys: [nodeId] }, { keys: [nodeId, { slot: 1, static: { passphrase: 'pw2' } }] }, { sysRoot: sys, kdf: FAST })).toEqual({ synced: ['slot 1 (static) replaced'], failedSyncs: [] });
    expect(opens('pw', 1)).toBe(false);
    expect(opens('pw2', 1)).toBe(true);
    // Opened with the static key, the nodeID key goes: only the configured key is left.
    expect(syncEncryptedKeys(vol, 'EPHEMERAL', { keys: [{ slot: 1, static: { passphrase: 'pw2' } }] }, { keys: [{ slot: 1, static: { passphrase: 'pw2' } }] }, { sysRoot: sys, kdf: FAST })).toEqual({ synced: ['slot 0 removed'], failedSyncs: [] });
    expect(opens(`${UUID.toLowerCase()}EPHEMERAL`)).toBe(false);
    // A nodeID key on a machine without a UUID cannot be made: reported, nothing removed for it.
    const r = syncEncryptedKeys(vol, 'EPHEMERAL', { keys: [{ slot: 1, static: { passphrase: 'pw2' } }] }, { keys: [{ slot: 1, static: { passphrase: 'pw2' } }, nodeId] }, { sysRoot: sysWithUuid(undefined), kdf: FAST });
    expect(r.synced).toEqual([]);
    expect(r.failedSyncs).toEqual([expect.stringMatching(/^slot 0: machine UUID is not populated/)]);
    // Keys that open nothing: refused, the volume as it was.
    expect(() => syncEncryptedKeys(vol, 'EPHEMERAL', { keys: [{ slot: 1, static: { passphrase: 'wrong' } }] }, { keys: [nodeId] }, { sysRoot: sys, kdf: FAST })).toThrow(/failed to open encrypted EPHEMERAL .*slot 1 \(static\): no keyslot opens with this key/);
    expect(opens('pw2', 1)).toBe(true);
  });
});

describe('PBKDF2 keyslots upgraded at the key sync (a volume cryptsetup or an older Bronze made)', () => {
  it("re-writes each configured key's PBKDF2 slot as argon2id; cryptsetup opens them; the next sync leaves them", () => {
    const sys = sysWithUuid(UUID);
    const vol = path.join(dir, 'vol');
    fs.writeFileSync(vol, Buffer.alloc(20 << 20));
    const nodeIdPass = nodeIdPassphrase('STATE', sys).toString();
    const keyFile = path.join(dir, 'key');
    fs.writeFileSync(keyFile, nodeIdPass);
    execFileSync(CRYPTSETUP!, ['luksFormat', '-q', '--type', 'luks2', '--pbkdf', 'pbkdf2', '--pbkdf-force-iterations', '1000', '--key-slot', '0', '--key-file', keyFile, vol]);
    const fd = fs.openSync(vol, 'r+');
    const masterKey = unlockLuks2(fd, Buffer.from(nodeIdPass)).masterKey.toString('hex');
    fs.closeSync(fd);
    // A static key in slot 1, PBKDF2 too, added the way cryptsetup does.
    fs.writeFileSync(path.join(dir, 'new'), 'pw');
    execFileSync(CRYPTSETUP!, ['luksAddKey', '-q', '--pbkdf', 'pbkdf2', '--pbkdf-force-iterations', '1000', '--key-slot', '1', '--key-file', keyFile, vol, path.join(dir, 'new')]);
    const kdfs = () => {
      const f = fs.openSync(vol, 'r');
      try {
        return Object.fromEntries(Object.entries(readLuks2(f).json.keyslots).map(([id, k]) => [id, k.kdf.type]));
      } finally {
        fs.closeSync(f);
      }
    };
    expect(kdfs()).toEqual({ '0': 'pbkdf2', '1': 'pbkdf2' });
    const cfg = { keys: [{ slot: 0, nodeID: {} }, { slot: 1, static: { passphrase: 'pw' } }] };
    expect(syncEncryptedKeys(vol, 'STATE', cfg, cfg, { sysRoot: sys, kdf: FAST })).toEqual({
      synced: ['slot 0 (nodeID) upgraded from pbkdf2 to argon2id', 'slot 1 (static) upgraded from pbkdf2 to argon2id'],
      failedSyncs: [],
    });
    expect(kdfs()).toEqual({ '0': 'argon2id', '1': 'argon2id' });
    const opens = (pass: string) => spawnSync(CRYPTSETUP!, ['open', '--test-passphrase', '--key-file', '-', vol], { input: pass }).status === 0;
    expect(opens(nodeIdPass), 'cryptsetup opens the upgraded nodeID slot').toBe(true);
    expect(opens('pw'), 'and the upgraded static one').toBe(true);
    expect(opens('not-it')).toBe(false);
    const dumped = execFileSync(CRYPTSETUP!, ['luksDump', '-q', '--dump-volume-key', '--key-file', '-', vol], { input: 'pw', encoding: 'utf8' });
    expect(dumped.slice(dumped.indexOf('MK dump:') + 8).replace(/[^0-9a-f]/g, '')).toBe(masterKey);
    // Already argon2id: nothing to do.
    expect(syncEncryptedKeys(vol, 'STATE', cfg, cfg, { sysRoot: sys, kdf: FAST })).toEqual({ synced: [], failedSyncs: [] });
    // A PBKDF2 slot whose key is not configured any more is removed, not upgraded; one whose key
    // cannot be made here (no UUID) is left as it is.
    execFileSync(CRYPTSETUP!, ['luksAddKey', '-q', '--pbkdf', 'pbkdf2', '--pbkdf-force-iterations', '1000', '--key-slot', '2', '--key-file', keyFile, vol, path.join(dir, 'new')]);
    const r = syncEncryptedKeys(vol, 'STATE', { keys: [{ slot: 1, static: { passphrase: 'pw' } }] }, cfg, { sysRoot: sysWithUuid(undefined), kdf: FAST });
    expect(r.synced).toEqual(['slot 2 removed']);
    expect(r.failedSyncs).toEqual([expect.stringMatching(/^slot 0: machine UUID is not populated/)]);
    expect(kdfs()).toEqual({ '0': 'argon2id', '1': 'argon2id' });
  });
});
