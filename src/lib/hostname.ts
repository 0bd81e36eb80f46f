// The machine's identity and the stable default hostname derived from it (until networkd knows
// better: the configuration, DHCP). In order, the first that exists:
//
//   1. the SMBIOS system UUID (/sys/class/dmi/id/product_uuid; the kernel leaves it out when the
//      firmware gives none, e.g. QEMU without -uuid, and all-zero or all-F values are ignored);
//   2. the MAC address of the first physical link by name: a link with a device behind it
//      (/sys/class/net/<link>/device). Links the kernel or networkd make (bond0, sit0, bridges,
//      VLANs) are never used: the kernel's built-in bonding made bond0 with a random MAC at
//      every boot, and the hostname changed with it (issue 17);
//   3. a machine id kept in STATE (`<stateDir>/machine-id`, made once, random): stable for as
//      long as STATE is (a reset makes a new one; without a disk STATE is memory-backed, and
//      then it lasts one boot only, which the log says).
//
// machined decides it once at boot (before the daemons start, while the links still have their
// own addresses) and leaves it in the run directory (contract/paths.ts: identityFile), where
// networkd reads it.
// The UUID itself is never logged nor handed out (describeIdentity names only its source): a
// nodeID disk key is made of it. The hostname shows 24 bits of a SHA-256 of it, not the UUID.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { keptRandomId } from './kept-id.ts';

export type IdentitySource = 'smbios-uuid' | 'mac' | 'machine-id';

export interface MachineIdentity {
  source: IdentitySource;
  /** The UUID, the MAC address (with its link) or the machine id. */
  value: string;
  link?: string;
}

export function stableHostname(seed: string | undefined): string {
  if (!seed) return 'bronze';
  return `bronze-${crypto.createHash('sha256').update(seed).digest('hex').slice(0, 6)}`;
}

function read(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The SMBIOS system UUID, lower case; undefined when there is none or it is a placeholder. */
export function smbiosUuid(sysRoot = '/sys'): string | undefined {
  const uuid = read(path.join(sysRoot, 'class/dmi/id/product_uuid'))?.toLowerCase();
  if (!uuid || /^[0-]+$/.test(uuid) || /^[f-]+$/.test(uuid)) return undefined;
  return uuid;
}

/** Physical links (a device behind them) with a usable MAC address, sorted by name. */
export function physicalLinks(sysRoot = '/sys'): Array<{ link: string; mac: string }> {
  const dir = path.join(sysRoot, 'class/net');
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
  const out: Array<{ link: string; mac: string }> = [];
  for (const link of names) {
    if (!fs.existsSync(path.join(dir, link, 'device'))) continue;
    const mac = read(path.join(dir, link, 'address'))?.toLowerCase();
    if (!mac || !/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(mac) || /^[0:]+$/.test(mac) || mac === 'ff:ff:ff:ff:ff:ff') continue;
    out.push({ link, mac });
  }
  return out;
}

/** The machine id in `<stateDir>/machine-id`, made (32 random hex digits) the first time. */
export function machineId(stateDir: string): { id: string; created: boolean } {
  return keptRandomId(path.join(stateDir, 'machine-id'), 0o644);
}

/** The identity, in the order at the top of this file; a machine id only when `stateDir` is given. */
export function machineIdentity(o: { sysRoot?: string; stateDir?: string } = {}): MachineIdentity | undefined {
  const uuid = smbiosUuid(o.sysRoot);
  if (uuid) return { source: 'smbios-uuid', value: uuid };
  const first = physicalLinks(o.sysRoot)[0];
  if (first) return { source: 'mac', value: first.mac, link: first.link };
  if (o.stateDir) return { source: 'machine-id', value: machineId(o.stateDir).id };
  return undefined;
}

/**
 * Where the identity came from, for the log. Never the SMBIOS UUID's value: it is what a nodeID
 * disk key is made of (src/machined/encryption.ts), and os:reader reads the logs.
 */
export function describeIdentity(id: MachineIdentity | undefined): string {
  if (!id) return 'no SMBIOS UUID, no physical link and no STATE: the plain default';
  if (id.source === 'smbios-uuid') return 'the SMBIOS UUID';
  if (id.source === 'mac') return `the MAC address ${id.value} of ${id.link} (no SMBIOS UUID)`;
  return `the machine id in STATE (no SMBIOS UUID, no physical link)`;
}

/** Writes the identity machined chose for the daemons to `file` (contract/paths.ts: identityFile). */
export function writeIdentityFile(id: MachineIdentity | undefined, file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // 0600: machined's directory is traversable by the daemons under their own users (its socket).
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(id ?? null), { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
}

/** The identity machined chose at boot, else (a host run without it) the links' and firmware's. */
export function readIdentity(file: string, sysRoot = '/sys'): MachineIdentity | undefined {
  const text = read(file);
  if (text !== undefined) {
    try {
      const v = JSON.parse(text) as MachineIdentity | null;
      if (v === null || (typeof v.value === 'string' && typeof v.source === 'string')) return v ?? undefined;
    } catch {
      /* half-written or foreign: decide again */
    }
  }
  return machineIdentity({ sysRoot });
}
