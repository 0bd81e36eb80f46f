// The machine identity behind the default hostname, on a fake /sys: the SMBIOS UUID, else the
// first physical link's MAC (never a link the kernel made, such as the built-in bonding's
// bond0 with a random MAC at each boot: issue 17), else a machine id kept in STATE.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeIdentity, machineId, machineIdentity, physicalLinks, readIdentity, smbiosUuid, stableHostname, writeIdentityFile } from './hostname.ts';

let root: string;
let sys: string;
let state: string;

/** A link in the fake /sys/class/net: `physical` gives it a device directory behind it. */
function link(name: string, mac: string, physical: boolean): void {
  const dir = path.join(sys, 'class/net', name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'address'), `${mac}\n`);
  if (physical) {
    const dev = path.join(sys, 'devices/pci0000:00', name);
    fs.mkdirSync(dev, { recursive: true });
    fs.symlinkSync(dev, path.join(dir, 'device'));
  }
}
function uuid(value: string): void {
  fs.mkdirSync(path.join(sys, 'class/dmi/id'), { recursive: true });
  fs.writeFileSync(path.join(sys, 'class/dmi/id/product_uuid'), `${value}\n`);
}
const randomMac = () => `02:${[...Array(5)].map(() => Math.floor(Math.random() * 256).toString(16).padStart(2, '0')).join(':')}`;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-identity-'));
  sys = path.join(root, 'sys');
  state = path.join(root, 'state');
  link('lo', '00:00:00:00:00:00', false);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('machine identity', () => {
  it('is the SMBIOS UUID when the firmware gives one', () => {
    uuid('4C4C4544-0042-3510-8052-B4C04F4B4E31');
    link('eth0', '52:54:00:12:34:56', true);
    expect(machineIdentity({ sysRoot: sys, stateDir: state })).toEqual({ source: 'smbios-uuid', value: '4c4c4544-0042-3510-8052-b4c04f4b4e31' });
  });

  it('is described for the log by its source, never by the SMBIOS UUID (a nodeID disk key is made of it)', () => {
    uuid('4C4C4544-0042-3510-8052-B4C04F4B4E31');
    const id = machineIdentity({ sysRoot: sys, stateDir: state });
    expect(describeIdentity(id)).toBe('the SMBIOS UUID');
    expect(describeIdentity(id).toLowerCase()).not.toContain('4c4c4544');
    // The hostname derived from it shows a hash, not the UUID.
    expect(stableHostname(id?.value)).toMatch(/^bronze-[0-9a-f]{6}$/);
    expect(describeIdentity({ source: 'mac', value: '52:54:00:12:34:56', link: 'eth0' })).toBe('the MAC address 52:54:00:12:34:56 of eth0 (no SMBIOS UUID)');
  });

  it('ignores placeholder UUIDs (all zero, all F)', () => {
    for (const u of ['00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF']) {
      uuid(u);
      expect(smbiosUuid(sys)).toBeUndefined();
    }
  });

  it('takes the first physical link, never bond0 (random MAC each boot) nor a tunnel', () => {
    link('bond0', randomMac(), false);
    link('sit0', '00:00:00:00', false);
    link('ens3', '52:54:00:12:34:56', true);
    link('eth1', '52:54:00:ab:cd:ef', true);
    const first = machineIdentity({ sysRoot: sys, stateDir: state });
    expect(first).toEqual({ source: 'mac', value: '52:54:00:12:34:56', link: 'ens3' });
    expect(physicalLinks(sys).map((l) => l.link)).toEqual(['ens3', 'eth1']);
    // "Another boot": bond0 comes back with another random MAC; the name stays.
    fs.writeFileSync(path.join(sys, 'class/net/bond0/address'), randomMac());
    expect(stableHostname(machineIdentity({ sysRoot: sys, stateDir: state })!.value)).toBe(stableHostname(first!.value));
    expect(fs.existsSync(path.join(state, 'machine-id')), 'no machine id needed').toBe(false);
  });

  it('without UUID or physical link: a machine id made once in STATE and kept', () => {
    link('bond0', randomMac(), false);
    const a = machineIdentity({ sysRoot: sys, stateDir: state })!;
    expect(a.source).toBe('machine-id');
    expect(a.value).toMatch(/^[0-9a-f]{32}$/);
    expect(fs.readFileSync(path.join(state, 'machine-id'), 'utf8')).toBe(`${a.value}\n`);
    fs.writeFileSync(path.join(sys, 'class/net/bond0/address'), randomMac());
    expect(machineIdentity({ sysRoot: sys, stateDir: state })).toEqual(a);
    expect(machineId(state)).toEqual({ id: a.value, created: false });
  });

  it('a damaged machine-id file is replaced', () => {
    fs.mkdirSync(state);
    fs.writeFileSync(path.join(state, 'machine-id'), 'not an id\n');
    const m = machineId(state);
    expect(m.created).toBe(true);
    expect(m.id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('the daemons read what machined chose; a host run without the file decides from /sys', () => {
    link('eth0', '52:54:00:12:34:56', true);
    const file = path.join(root, 'run/machined/identity.json');
    expect(readIdentity(file, sys)).toEqual({ source: 'mac', value: '52:54:00:12:34:56', link: 'eth0' });
    writeIdentityFile({ source: 'machine-id', value: 'f'.repeat(32) }, file);
    expect(readIdentity(file, sys)).toEqual({ source: 'machine-id', value: 'f'.repeat(32) });
  });
});
