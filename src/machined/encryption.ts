// machine.systemDiskEncryption at run time: STATE and EPHEMERAL as LUKS2 volumes (src/disk/luks2.ts)
// mapped through dm-crypt as /dev/mapper/luks2-<label>, Talos's name for them since v1.12.
//
// Keys are Talos's: `static` is the passphrase as written; `nodeID` is the SMBIOS system UUID
// followed by the volume's label ("<uuid>STATE"), so that the disk opens only in the machine it
// was formatted in. The UUID is not a secret (anyone who reads the machine's SMBIOS, or was
// told the UUID, can make the key), so it is never logged nor put in an error message here.
// kms and tpm are refused when the configuration is validated.
//
// Keyslots are argon2id (src/disk/luks2.ts). A PBKDF2 keyslot (Bronze wrote those before) whose
// key is configured is re-written as argon2id at the next key sync, in the same slot: the new
// keyslot goes to a free area first, the headers follow, and the old area is zeroed last, so a
// power cut at any point leaves a header whose keyslots all open (rewriteKeyslots).
//
// Where each volume's settings come from at boot: STATE's from META (`state.encryption`, written
// when STATE is formatted and whenever a loaded configuration changes them), since the
// configuration lives on STATE; EPHEMERAL's from the configuration on STATE, read once STATE is
// mounted. Like Talos, Bronze never encrypts a volume in place: a volume that holds a filesystem
// and is configured to be encrypted is left alone, with an error saying to wipe it.
import fs from 'node:fs';
import path from 'node:path';
import { systemDiskEncryptionOf } from '../config/accessors/encryption.ts';
import { encryptionSchemas, type EncryptionConfig } from '../config/schema.ts';
import { DATA_OFFSET, READABLE_KDFS, formatLuks2, isLuks, readLuks2, rewriteKeyslots, unlockLuks2, type Luks2Kdf, type Luks2Volume } from '../disk/luks2.ts';
import { dmCreate, dmRemove } from '../lib/devmapper.ts';
import { smbiosUuid } from '../lib/hostname.ts';
import { MetaStore } from '../install/meta.ts';
import { CONFIG_FILE } from './config/manager.ts';

/** META key: STATE's encryption settings (JSON), read at boot before STATE is opened. */
export const META_STATE_ENCRYPTION = 'state.encryption';

export const mapperName = (label: string): string => `luks2-${label}`;

export interface KeyMaterial {
  slot: number;
  kind: 'static' | 'nodeID';
  passphrase: Buffer;
}

/**
 * Talos's nodeID passphrase: the SMBIOS system UUID and the label, with Talos's entropy check
 * (no character more than half the UUID's length: a placeholder UUID would make a guessable key).
 */
export function nodeIdPassphrase(label: string, sysRoot = '/sys'): Buffer {
  const uuid = smbiosUuid(sysRoot);
  if (!uuid) throw new Error('machine UUID is not populated: the firmware gives no SMBIOS system UUID, so a nodeID key cannot be made (under QEMU, pass -uuid)');
  const counts = new Map<string, number>();
  for (const c of uuid) {
    const n = (counts.get(c) ?? 0) + 1;
    counts.set(c, n);
    // Not the UUID itself: it is the key's only ingredient besides the label.
    if (n > uuid.length / 2) throw new Error('machine UUID entropy check failed: the SMBIOS UUID repeats one character too often, and a nodeID key made from it would be guessable');
  }
  return Buffer.from(uuid + label, 'utf8');
}

/** The passphrases of a volume's keys, by slot. Throws naming the key that cannot be made. */
export function keyMaterial(cfg: EncryptionConfig, label: string, sysRoot = '/sys'): KeyMaterial[] {
  return [...cfg.keys]
    .sort((a, b) => a.slot - b.slot)
    .map((k): KeyMaterial => {
      if (k.static) return { slot: k.slot, kind: 'static', passphrase: Buffer.from(k.static.passphrase, 'utf8') };
      if (k.nodeID) return { slot: k.slot, kind: 'nodeID', passphrase: nodeIdPassphrase(label, sysRoot) };
      throw new Error(`${label} key slot ${k.slot}: Bronze makes static and nodeID keys only`);
    });
}

/** dm-crypt's table line for a LUKS2 volume on `device` of `size` bytes (dm-crypt's own format). */
export function cryptTarget(vol: Pick<Luks2Volume, 'cipher' | 'masterKey' | 'dataOffset' | 'sectorSize' | 'dataSize'>, device: string, size: number, options: readonly string[] = []) {
  const bytes = Math.min(vol.dataSize ?? Infinity, size - vol.dataOffset);
  const sectors = Math.floor(bytes / vol.sectorSize) * (vol.sectorSize / 512);
  if (sectors <= 0) throw new Error(`${device} (${size} bytes) has no room for data after its LUKS2 header`);
  const opts = [...(vol.sectorSize !== 512 ? [`sector_size:${vol.sectorSize}`] : []), ...options];
  const params = `${vol.cipher} ${vol.masterKey.toString('hex')} 0 ${device} ${vol.dataOffset / 512}${opts.length ? ` ${opts.length} ${opts.join(' ')}` : ''}`;
  return { length: sectors, type: 'crypt', params };
}

/** Maps the opened volume through dm-crypt; returns its device node (/dev/dm-N), linked as /dev/mapper/luks2-<label>. */
function mapVolume(vol: Luks2Volume, device: string, size: number, label: string, options: readonly string[], mapper = mapperName(label)): string {
  const name = mapper;
  try {
    // The device-mapper UUID cryptsetup gives a LUKS2 mapping, so that lsblk and cryptsetup status know it.
    const { minor } = dmCreate(name, cryptTarget(vol, device, size, options), { secure: true, uuid: `CRYPT-LUKS2-${vol.uuid.replace(/-/g, '')}-${name}` });
    const node = `/dev/dm-${minor}`;
    // devtmpfs makes the node as the kernel adds the disk; give it a moment rather than fail.
    for (let i = 0; i < 100 && !fs.existsSync(node); i++) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    if (!fs.existsSync(node)) throw new Error(`${node} did not appear for ${name}`);
    const link = path.join('/dev/mapper', name);
    fs.rmSync(link, { force: true });
    fs.symlinkSync(`../dm-${minor}`, link);
    return node;
  } finally {
    vol.masterKey.fill(0);
  }
}

function withFd<T>(device: string, mode: 'r' | 'r+', f: (fd: number) => T): T {
  const fd = fs.openSync(device, mode);
  try {
    return f(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export interface OpenedVolume {
  /** The mapped device to mount: /dev/dm-N. */
  device: string;
  /** The keyslot that opened it. */
  slot: number;
  /** What the keyslots sync changed ("slot 1 (static) added", "slot 0 removed"). */
  synced?: string[];
  /** Keys that could not be synced, and why (Talos's encryptionFailedSyncs). */
  failedSyncs?: string[];
}

/** Each key that can be made, and why each other one cannot. */
function makeKeys(cfg: EncryptionConfig, label: string, sysRoot?: string): { keys: KeyMaterial[]; failures: Array<{ slot: number; why: string }> } {
  const keys: KeyMaterial[] = [];
  const failures: Array<{ slot: number; why: string }> = [];
  for (const k of [...cfg.keys].sort((a, b) => a.slot - b.slot)) {
    try {
      keys.push(...keyMaterial({ ...cfg, keys: [k] }, label, sysRoot));
    } catch (err) {
      failures.push({ slot: k.slot, why: (err as Error).message });
    }
  }
  return { keys, failures };
}

type MadeKeys = ReturnType<typeof makeKeys>;

/**
 * Unlocks the volume on `fd` with the first of cfg's keys that opens its slot; throws naming
 * each failure. Returns the keys it made too, for a sync to the same settings.
 */
function unlockWith(fd: number, device: string, label: string, cfg: EncryptionConfig, sysRoot?: string): { vol: Luks2Volume; key: KeyMaterial; made: MadeKeys } {
  const made = makeKeys(cfg, label, sysRoot);
  const why = made.failures.map((f) => `slot ${f.slot}: ${f.why}`);
  for (const key of made.keys) {
    try {
      return { vol: unlockLuks2(fd, key.passphrase, key.slot), key, made };
    } catch (err) {
      why.push(`slot ${key.slot} (${key.kind}): ${(err as Error).message}`);
    }
  }
  throw new Error(`failed to open encrypted ${label} (${device}): ${why.join('; ') || 'no keys configured'}`);
}

/** Options for writing keyslots: the KDF of new ones (default: argon2id calibrated here; tests pass a cheap one). */
export interface KeyslotWriteOptions {
  sysRoot?: string;
  kdf?: Luks2Kdf;
}

/**
 * Makes the volume's keyslots the configured keys, as Talos does at each open: a configured key
 * whose slot it does not open is written to it, and a slot no key is configured for is removed.
 * A configured key whose PBKDF2 slot opens is re-written as argon2id in the same slot (reported
 * as "upgraded"). Each configured key is tried once (one KDF each, besides the key that opened
 * the volume). A key that cannot be made (nodeID without a UUID) leaves its slot as it is, and
 * is reported.
 */
function syncKeyslots(fd: number, vol: Luks2Volume, opener: KeyMaterial, cfg: EncryptionConfig, label: string, o: KeyslotWriteOptions, made = makeKeys(cfg, label, o.sysRoot)): { synced: string[]; failedSyncs: string[] } {
  const keys = made.keys;
  const failures = [...made.failures];
  const slots = readLuks2(fd).json.keyslots;
  const inHeader = Object.keys(slots).map(Number);
  const kdfOf = (slot: number) => slots[String(slot)]?.kdf.type;
  const keep = failures.map((f) => f.slot).filter((slot) => inHeader.includes(slot));
  // A keyslot Bronze cannot read (a KDF it has no function for) is not replaced as if its key were wrong.
  const unreadable = inHeader.filter((slot) => !READABLE_KDFS.has(kdfOf(slot)!));
  for (const slot of unreadable) {
    keep.push(slot);
    failures.push({ slot, why: `keyslot ${slot} uses ${kdfOf(slot)}, which Bronze does not read: left as it is` });
  }
  const add: Array<KeyMaterial & { how: 'added' | 'replaced' | 'upgraded' }> = [];
  for (const k of keys.filter((key) => !unreadable.includes(key.slot))) {
    const same = k.slot === opener.slot && k.passphrase.equals(opener.passphrase);
    let opens = same;
    if (!same && inHeader.includes(k.slot)) {
      try {
        unlockLuks2(fd, k.passphrase, k.slot).masterKey.fill(0);
        opens = true;
      } catch {
        opens = false;
      }
    }
    if (opens && kdfOf(k.slot) === 'pbkdf2') add.push({ ...k, how: 'upgraded' });
    else if (opens) keep.push(k.slot);
    else add.push({ ...k, how: inHeader.includes(k.slot) ? 'replaced' : 'added' });
  }
  const removed = inHeader.filter((slot) => !keep.includes(slot) && !add.some((a) => a.slot === slot));
  const failedSyncs = failures.map((f) => `slot ${f.slot}: ${f.why}`);
  if (add.length === 0 && removed.length === 0) return { synced: [], failedSyncs };
  rewriteKeyslots(fd, vol.masterKey, keep, add, o.kdf ? { kdf: o.kdf } : {});
  return {
    synced: [...add.map((a) => `slot ${a.slot} (${a.kind}) ${a.how === 'upgraded' ? 'upgraded from pbkdf2 to argon2id' : a.how}`), ...removed.map((slot) => `slot ${slot} removed`)],
    failedSyncs,
  };
}

/**
 * Opens the LUKS2 volume on `device` with the keys of `cfg`, in slot order, makes its keyslots
 * those of `sync` (default `cfg`; false: leave them), and maps it. Throws naming each key's
 * failure when none opens it; nothing is written to the volume then.
 */
export function openEncrypted(device: string, size: number, label: string, cfg: EncryptionConfig, o: KeyslotWriteOptions & { sync?: EncryptionConfig | false; mapper?: string } = {}): OpenedVolume {
  const sync = o.sync ?? cfg;
  const { vol, key, synced, failedSyncs } = withFd(device, sync ? 'r+' : 'r', (fd) => {
    const opened = unlockWith(fd, device, label, cfg, o.sysRoot);
    if (!sync) return { ...opened, synced: [], failedSyncs: [] };
    try {
      // Syncing to the settings it opened with: the keys are made already.
      return { ...opened, ...syncKeyslots(fd, opened.vol, opened.key, sync, label, o, sync === cfg ? opened.made : undefined) };
    } catch (err) {
      // The volume is open: a sync that failed is reported (as Talos does), not a reason to leave it closed.
      return { ...opened, synced: [], failedSyncs: [`syncing the keyslots: ${(err as Error).message}`] };
    }
  });
  return { device: mapVolume(vol, device, size, label, cfg.options ?? [], o.mapper), slot: key.slot, synced, failedSyncs };
}

/**
 * Makes the keyslots of an encrypted volume that is open (mapped) already those of `want`,
 * unlocking its header again with the keys of `have` (STATE: opened at boot with META's record,
 * before the configuration on it was read). Returns what changed.
 */
export function syncEncryptedKeys(device: string, label: string, have: EncryptionConfig, want: EncryptionConfig, o: KeyslotWriteOptions = {}): { synced: string[]; failedSyncs: string[] } {
  return withFd(device, 'r+', (fd) => {
    const { vol, key } = unlockWith(fd, device, label, have, o.sysRoot);
    try {
      return syncKeyslots(fd, vol, key, want, label, o);
    } finally {
      vol.masterKey.fill(0);
    }
  });
}

/** Formats `device` as a new LUKS2 volume with the configured keys (all it held is lost) and maps it. */
export function formatEncrypted(device: string, size: number, label: string, cfg: EncryptionConfig, o: KeyslotWriteOptions & { mapper?: string } = {}): OpenedVolume {
  const keys = keyMaterial(cfg, label, o.sysRoot);
  const vol = withFd(device, 'r+', (fd) =>
    formatLuks2(fd, size, {
      keys: keys.map((k) => ({ slot: k.slot, passphrase: k.passphrase })),
      keySize: cfg.keySize === 256 ? 32 : 64,
      sectorSize: cfg.blockSize === 4096 ? 4096 : 512,
      ...(o.kdf ? { kdf: o.kdf } : {}),
    }),
  );
  return { device: mapVolume(vol, device, size, label, cfg.options ?? [], o.mapper), slot: vol.slot };
}

/** Removes the volume's mapping (unmount it first); a volume that is not mapped is left as it is. */
export function closeEncrypted(label: string, name = mapperName(label)): boolean {
  if (!fs.existsSync(path.join('/dev/mapper', name))) return false;
  dmRemove(name);
  fs.rmSync(path.join('/dev/mapper', name), { force: true });
  return true;
}

/** What a wipe leaves at the start of a volume it erased: the next boot formats it (encrypted or not, as its settings then say). */
export const ERASED_MARK = 'BRONZE-ERASED\n';

/**
 * Erases a volume for a wipe: its first 16 MiB (an encrypted volume's LUKS2 headers and
 * keyslots, the only copies of its key: nothing on it can be decrypted again) zeroed, then
 * ERASED_MARK, so that the next boot knows a wipe left it so and formats it.
 */
export function eraseVolume(device: string): void {
  withFd(device, 'r+', (fd) => {
    const zero = Buffer.alloc(4 << 20);
    for (let off = 0; off < DATA_OFFSET; off += zero.length) fs.writeSync(fd, zero, 0, zero.length, off);
    fs.fsyncSync(fd);
    fs.writeSync(fd, Buffer.from(ERASED_MARK), 0, ERASED_MARK.length, 0);
    fs.fsyncSync(fd);
  });
}

/**
 * What the start of a volume holds: LUKS, a wipe's ERASED_MARK, nothing at all (its first MiB
 * zeroes), or something else (a filesystem). Read at every boot for STATE and EPHEMERAL, so
 * the usual answers come from the first 4 KiB.
 */
export function volumeContent(device: string): 'luks' | 'erased' | 'blank' | 'other' {
  return withFd(device, 'r', (fd) => {
    const head = Buffer.alloc(4096);
    const n = fs.readSync(fd, head, 0, head.length, 0);
    if (isLuks(head)) return 'luks';
    if (head.subarray(0, ERASED_MARK.length).toString('latin1') === ERASED_MARK) return 'erased';
    if (!head.subarray(0, n).equals(Buffer.alloc(n))) return 'other';
    const rest = Buffer.alloc(1 << 20);
    const m = fs.readSync(fd, rest, 0, rest.length, 0);
    return rest.subarray(0, m).equals(Buffer.alloc(m)) ? 'blank' : 'other';
  });
}

// The settings' resolver lives with the configuration's accessors; re-exported for machined's callers.

/** STATE's settings as META records them (undefined: none recorded). Throws on a record that does not parse. */
export function stateEncryptionOfMeta(record: string | undefined): EncryptionConfig | undefined {
  if (!record) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(record);
  } catch {
    // Not the parser's message: it would quote the record, which may hold a passphrase.
    throw new Error(`META's ${META_STATE_ENCRYPTION} is not JSON`);
  }
  const r = encryptionSchemas().encryptionSchema.safeParse(data);
  if (!r.success) throw new Error(`META's ${META_STATE_ENCRYPTION} is not valid encryption settings`);
  return r.data;
}

/** STATE's settings recorded in the META partition at `metaDevice` (undefined: none). */
export function recordedStateEncryption(metaDevice: string | undefined): EncryptionConfig | undefined {
  if (!metaDevice) return undefined;
  const store = MetaStore.open(metaDevice);
  try {
    return stateEncryptionOfMeta(store.get(META_STATE_ENCRYPTION));
  } finally {
    store.close();
  }
}

/**
 * Records STATE's settings in META as `cfg` has them (removes the record when undefined), unless
 * they are recorded so already. Returns whether META changed.
 */
export function recordStateEncryption(metaDevice: string, cfg: EncryptionConfig | undefined): boolean {
  return cfg ? MetaStore.update(metaDevice, { [META_STATE_ENCRYPTION]: JSON.stringify(cfg) }) : MetaStore.update(metaDevice, {}, [META_STATE_ENCRYPTION]);
}

/** EPHEMERAL's settings in the configuration kept on STATE (mounted at `stateDir`); undefined without either. */
export function ephemeralEncryptionOnState(stateDir = '/system/state'): EncryptionConfig | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(stateDir, CONFIG_FILE), 'utf8');
  } catch {
    return undefined;
  }
  return systemDiskEncryptionOf(text)?.ephemeral;
}

/** Closes the mappings of STATE and EPHEMERAL that are open (after they are unmounted); a failure is logged. */
export function closeVolumes(log: { warn(m: string): void; info(m: string): void }): void {
  for (const label of ['STATE', 'EPHEMERAL']) {
    try {
      if (closeEncrypted(label)) log.info(`closed encrypted ${label} (/dev/mapper/${mapperName(label)})`);
    } catch (err) {
      log.warn(`closing encrypted ${label}: ${(err as Error).message}`);
    }
  }
}

/** META key: settings STATE's keyslots are being synced to; promoted to the record once they are. */
export const META_STATE_ENCRYPTION_PENDING = 'state.encryption.pending';

/**
 * After the configuration is loaded at boot: STATE's keyslots follow the configuration's
 * settings (machine.systemDiskEncryption.state or a VolumeConfig), and META's record follows
 * them, in that order and only when every key was synced, so that the record always names keys
 * that open STATE. The settings being synced to are written first as a pending record, which
 * the next boot settles (settlePendingStateEncryption) if the power goes in between.
 * An unencrypted STATE keeps no record: Bronze does not encrypt in place, and the configuration
 * asking for it gets an error saying how (a wipe, which records the settings it encrypts with).
 */
export function syncStateEncryption(
  log: { info(m: string): void; warn(m: string): void; error(m: string): void },
  state: { metaDevice: string | undefined; device?: string; encrypted: boolean },
  configText: string | undefined,
  sync: typeof syncEncryptedKeys = syncEncryptedKeys,
): void {
  const { metaDevice } = state;
  if (!metaDevice || configText === undefined) return;
  let cfg: EncryptionConfig | undefined;
  try {
    cfg = systemDiskEncryptionOf(configText)?.state;
  } catch {
    return; // an invalid configuration is reported where it is loaded
  }
  if (!state.encrypted) {
    if (cfg) log.error('the configuration asks for STATE encrypted, but STATE is not: Bronze does not encrypt in place; STATE is encrypted when it is wiped (`bronzectl reset --system-labels-to-wipe STATE --reboot`, which erases the configuration on it too)');
    return;
  }
  const recorded = recordedStateEncryption(metaDevice);
  if (JSON.stringify(recorded) === JSON.stringify(cfg)) return;
  if (!cfg || !recorded || !state.device) {
    log.warn('STATE is encrypted, and the configuration no longer says so: it stays encrypted with the keys recorded in META (Bronze does not decrypt in place; a wipe makes it a plain xfs)');
    return;
  }
  MetaStore.update(metaDevice, { [META_STATE_ENCRYPTION_PENDING]: JSON.stringify(cfg) });
  let failed: string[];
  try {
    const r = sync(state.device, 'STATE', recorded, cfg);
    if (r.synced.length) log.info(`STATE's keyslots synced with the configuration: ${r.synced.join(', ')}`);
    failed = r.failedSyncs;
  } catch (err) {
    failed = [(err as Error).message];
  }
  if (failed.length) {
    MetaStore.update(metaDevice, {}, [META_STATE_ENCRYPTION_PENDING]);
    log.error(`STATE's keyslots are not all synced with the configuration (${failed.join('; ')}): META keeps the settings that open it`);
    return;
  }
  MetaStore.update(metaDevice, { [META_STATE_ENCRYPTION]: JSON.stringify(cfg) }, [META_STATE_ENCRYPTION_PENDING]);
}

/**
 * At boot, before STATE is opened: a pending record left by a sync the power cut short is
 * settled. Whichever settings open STATE become the record (one key derivation per key tried); if
 * neither does, both stay, and the open says why.
 */
export function settlePendingStateEncryption(metaDevice: string | undefined, device: string | undefined, o: { sysRoot?: string } = {}): void {
  if (!metaDevice || !device) return;
  const store = MetaStore.open(metaDevice);
  let pending: EncryptionConfig | undefined;
  let recorded: EncryptionConfig | undefined;
  try {
    pending = stateEncryptionOfMeta(store.get(META_STATE_ENCRYPTION_PENDING));
    recorded = stateEncryptionOfMeta(store.get(META_STATE_ENCRYPTION));
  } finally {
    store.close();
  }
  if (!pending) return;
  const opens = (cfg: EncryptionConfig | undefined) => {
    if (!cfg) return false;
    try {
      withFd(device, 'r', (fd) => unlockWith(fd, device, 'STATE', cfg, o.sysRoot).vol.masterKey.fill(0));
      return true;
    } catch {
      return false;
    }
  };
  if (opens(recorded)) MetaStore.update(metaDevice, {}, [META_STATE_ENCRYPTION_PENDING]);
  else if (opens(pending)) MetaStore.update(metaDevice, { [META_STATE_ENCRYPTION]: JSON.stringify(pending) }, [META_STATE_ENCRYPTION_PENDING]);
}


/** STATE's settings at boot: META's record, once a sync the power cut short is settled. */
export function stateEncryptionAtBoot(metaDevice: string | undefined, device: string | undefined): EncryptionConfig | undefined {
  settlePendingStateEncryption(metaDevice, device);
  return recordedStateEncryption(metaDevice);
}
