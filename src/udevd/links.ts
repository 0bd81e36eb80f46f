// The /dev/disk/by-* symlinks: which names a device gets, and a table that keeps the links
// under a dev root equal to what the known devices claim.
//
// Links are relative ('../../sda1'), created atomically (a temporary link renamed over the
// name). When two devices claim one name (two filesystems with the same label), the first keeps
// it and the next one takes over when it goes away.
import fs from 'node:fs';
import path from 'node:path';

export const LINK_DIRS = ['by-id', 'by-path', 'by-label', 'by-partlabel', 'by-uuid', 'by-partuuid'] as const;

/** What a device's links are made from. */
export interface LinkSource {
  devname: string;
  byId: string[];
  byPath: string;
  fsLabel: string;
  fsUuid: string;
  partLabel: string;
  partUuid: string;
}

/**
 * udev's encoding of a label or UUID in a link name: ASCII letters and digits, '#+-.:=@_' and
 * valid multi-byte UTF-8 stay; everything else (space, '/', '\\', controls) becomes \xNN.
 */
export function encodeLinkName(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (/^[A-Za-z0-9#+\-.:=@_]$/.test(ch) || (cp > 0x7f && cp !== 0xfffd)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return out;
}

function usable(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\0') && Buffer.byteLength(name) <= 255;
}

/** The links (relative to the dev root, e.g. 'disk/by-uuid/…') a device should have. */
export function linkNames(src: LinkSource): string[] {
  const out: string[] = [];
  const add = (dir: string, name: string) => {
    if (usable(name)) out.push(`disk/${dir}/${name}`);
  };
  for (const id of src.byId) add('by-id', id);
  if (src.byPath) add('by-path', src.byPath);
  if (src.fsLabel) add('by-label', encodeLinkName(src.fsLabel));
  if (src.fsUuid) add('by-uuid', encodeLinkName(src.fsUuid));
  if (src.partLabel) add('by-partlabel', encodeLinkName(src.partLabel));
  if (src.partUuid) add('by-partuuid', encodeLinkName(src.partUuid));
  return [...new Set(out)];
}

export interface LinkErrors {
  warn(msg: string): void;
}

/** Keeps `<devRoot>/disk/by-*` equal to the links the known devices claim. */
export class LinkTable {
  /** link → devices claiming it, first claimant first. */
  readonly #claims = new Map<string, string[]>();
  /** device → [devname, links]. */
  readonly #devices = new Map<string, { devname: string; links: string[] }>();
  /** Devices whose held links changed because another device came or went (drained by takeAffected). */
  readonly #affected = new Set<string>();

  constructor(
    readonly devRoot: string,
    private readonly log: LinkErrors,
  ) {}

  /** Sets the links of a device (by its kernel name), adding and removing what changed. */
  set(device: string, devname: string, links: string[]): void {
    const before = this.#devices.get(device);
    const wanted = new Set(links);
    const touched = new Set<string>();
    if (before) {
      for (const l of before.links) {
        if (wanted.has(l) && before.devname === devname) continue;
        this.#unclaim(l, device);
        touched.add(l);
      }
    }
    this.#devices.set(device, { devname, links: [...wanted] });
    for (const l of wanted) {
      const claims = this.#claims.get(l) ?? [];
      if (!claims.includes(device)) {
        claims.push(device);
        this.#claims.set(l, claims);
        touched.add(l);
      }
    }
    for (const l of touched) this.#sync(l);
  }

  remove(device: string): void {
    const before = this.#devices.get(device);
    if (!before) return;
    this.#devices.delete(device);
    for (const l of before.links) {
      this.#unclaim(l, device);
      this.#sync(l);
    }
  }

  /** The links a device holds now (claimed and pointing at it). */
  linksOf(device: string): string[] {
    const d = this.#devices.get(device);
    if (!d) return [];
    return d.links.filter((l) => this.#claims.get(l)?.[0] === device).sort();
  }

  /** Other devices that gained or lost a shared link since the last call (their symlink lists changed). */
  takeAffected(except?: string): string[] {
    const out = [...this.#affected].filter((d) => d !== except && this.#devices.has(d));
    this.#affected.clear();
    return out;
  }

  /** Removes symlinks under disk/by-* that no device claims (left by an earlier run). */
  prune(): number {
    let removed = 0;
    for (const dir of LINK_DIRS) {
      const full = path.join(this.devRoot, 'disk', dir);
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(full, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries) {
        if (!e.isSymbolicLink()) continue;
        const rel = `disk/${dir}/${e.name}`;
        if (this.#claims.has(rel)) continue;
        try {
          fs.unlinkSync(path.join(full, e.name));
          removed++;
        } catch (err) {
          this.log.warn(`removing stale link ${rel}: ${(err as Error).message}`);
        }
      }
    }
    return removed;
  }

  #unclaim(link: string, device: string): void {
    const claims = this.#claims.get(link);
    if (!claims) return;
    const rest = claims.filter((d) => d !== device);
    if (claims[0] === device && rest[0] !== undefined) this.#affected.add(rest[0]);
    if (rest.length === 0) this.#claims.delete(link);
    else this.#claims.set(link, rest);
  }

  /** Makes the link on disk match its first claimant (or removes it). */
  #sync(link: string): void {
    const full = path.join(this.devRoot, link);
    const owner = this.#claims.get(link)?.[0];
    try {
      if (owner === undefined) {
        fs.rmSync(full, { force: true });
        return;
      }
      const devname = this.#devices.get(owner)!.devname;
      const target = path.relative(path.dirname(full), path.join(this.devRoot, devname));
      let current: string | undefined;
      try {
        current = fs.readlinkSync(full);
      } catch {
        current = undefined;
      }
      if (current === target) return;
      fs.mkdirSync(path.dirname(full), { recursive: true, mode: 0o755 });
      const tmp = path.join(path.dirname(full), `.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
      fs.symlinkSync(target, tmp);
      try {
        fs.renameSync(tmp, full);
      } catch (err) {
        fs.rmSync(tmp, { force: true });
        throw err;
      }
    } catch (err) {
      this.log.warn(`link ${link}: ${(err as Error).message}`);
    }
  }
}
