// What /sys says about a block device: its kind, size, flags, identity (model, serial, WWID),
// transport, and the persistent names udev derives from them (by-id, by-path).
//
// The names follow systemd-udev's 60-persistent-storage rules and path_id, in a subset:
// virtio-blk, NVMe, SATA (libata), SCSI (virtio-scsi, SAS and the like, reduced to the
// default H:C:T:L form), USB storage and MMC, under PCI or platform buses. Known differences:
// the ATA model comes from the SCSI INQUIRY data in sysfs (16 characters) where udev's ata_id
// asks the drive (40), and SCSI by-id names use vendor_model_serial rather than scsi_id's
// page-0x83 form.
import fs from 'node:fs';
import path from 'node:path';
import { parseUeventFile } from './uevent-file.ts';

export interface SysBlockDevice {
  /** The kernel name, e.g. 'sda1' (also the resource id). */
  name: string;
  /** Under /sys, e.g. '/devices/virtual/block/loop0/loop0p1'. */
  devpath: string;
  /** The node's name under /dev (DEVNAME), e.g. 'loop0p1'. */
  devname: string;
  type: 'disk' | 'partition';
  major: number;
  minor: number;
  /** The disk a partition is on; '' for a disk. */
  parent: string;
  /** 0 for a disk. */
  partitionNumber: number;
  /** Where a partition starts on its disk, in bytes. */
  partitionStart: number;
  /** PARTNAME the kernel reports (the GPT name), '' when none. */
  partitionName: string;
  /** Bytes. */
  size: number;
  readOnly: boolean;
  removable: boolean;
  rotational: boolean;
  hidden: boolean;
  cdrom: boolean;
  logicalBlockSize: number;
  ioSize: number;
  vendor: string;
  model: string;
  serial: string;
  wwid: string;
  modalias: string;
  /** 'virtio', 'nvme', 'sata', 'scsi', 'usb', 'mmc', 'xen' or '' (virtual devices). */
  transport: string;
  /** The parent device's path under /sys/devices, e.g. '/pci0000:00/0000:00:04.0/virtio2'. */
  busPath: string;
  /** DISKSEQ, 0 when the kernel has none. */
  diskseq: number;
  /** Names under disk/by-id (without the directory). */
  byId: string[];
  /** The name under disk/by-path, '' when the device has no physical path. */
  byPath: string;
}

/** A sysfs attribute's value, trimmed; '' when it cannot be read. */
export function attr(dir: string, name: string): string {
  try {
    return fs.readFileSync(path.join(dir, name), 'latin1').trim();
  } catch {
    return '';
  }
}

function num(s: string): number {
  const n = Number(s);
  return Number.isFinite(n) && s !== '' ? n : 0;
}

/** The devpath of /sys/class/block/<name>, or undefined when it does not exist. */
export function blockDevpath(sysRoot: string, name: string): string | undefined {
  try {
    const real = fs.realpathSync(path.join(sysRoot, 'class', 'block', name));
    const root = fs.realpathSync(sysRoot);
    return real.startsWith(root + '/') ? real.slice(root.length) : undefined;
  } catch {
    return undefined;
  }
}

/** Every block device under /sys/class/block, disks before partitions. */
export function listBlockDevices(sysRoot: string): Array<{ name: string; devpath: string }> {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(sysRoot, 'class', 'block'));
  } catch {
    return [];
  }
  const out: Array<{ name: string; devpath: string; partition: boolean }> = [];
  for (const name of names.sort()) {
    const devpath = blockDevpath(sysRoot, name);
    if (!devpath) continue;
    out.push({ name, devpath, partition: fs.existsSync(path.join(sysRoot, devpath, 'partition')) });
  }
  out.sort((a, b) => Number(a.partition) - Number(b.partition) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return out.map(({ name, devpath }) => ({ name, devpath }));
}

/**
 * Reads a block device from /sys. `env` is the event's environment when there is one; else the
 * device's uevent file is read. Undefined when the device is gone.
 */
export function readBlockDevice(sysRoot: string, devpath: string, env?: Record<string, string>): SysBlockDevice | undefined {
  const dir = path.join(sysRoot, devpath);
  const fileEnv = parseUeventFile(attr(dir, 'uevent'));
  if (!fs.existsSync(path.join(dir, 'dev')) && Object.keys(fileEnv).length === 0) return undefined;
  const e = { ...fileEnv, ...(env ?? {}) };
  const name = path.basename(devpath);
  const isPartition = e.DEVTYPE === 'partition' || fs.existsSync(path.join(dir, 'partition'));
  const diskDir = isPartition ? path.dirname(dir) : dir;
  const diskDevpath = isPartition ? path.dirname(devpath) : devpath;
  const [maj, min] = (attr(dir, 'dev') || `${e.MAJOR ?? ''}:${e.MINOR ?? ''}`).split(':');
  const id = identity(sysRoot, diskDevpath);
  const partitionNumber = isPartition ? num(attr(dir, 'partition') || e.PARTN || '') : 0;
  const suffix = isPartition ? `-part${partitionNumber}` : '';
  return {
    name,
    devpath,
    devname: safeDevname(e.DEVNAME, name),
    type: isPartition ? 'partition' : 'disk',
    major: num(maj ?? ''),
    minor: num(min ?? ''),
    parent: isPartition ? path.basename(diskDevpath) : '',
    partitionNumber,
    partitionStart: isPartition ? num(attr(dir, 'start')) * 512 : 0,
    partitionName: isPartition ? (e.PARTNAME ?? '') : '',
    size: num(attr(dir, 'size')) * 512,
    readOnly: attr(dir, 'ro') === '1',
    removable: attr(diskDir, 'removable') === '1',
    rotational: attr(path.join(diskDir, 'queue'), 'rotational') === '1',
    hidden: attr(diskDir, 'hidden') === '1',
    cdrom: /^sr[0-9]+$/.test(path.basename(diskDevpath)) || attr(path.join(diskDir, 'device'), 'type') === '5',
    logicalBlockSize: num(attr(path.join(diskDir, 'queue'), 'logical_block_size')) || 512,
    ioSize: num(attr(path.join(diskDir, 'queue'), 'minimum_io_size')) || 512,
    ...id.attrs,
    diskseq: num(attr(diskDir, 'diskseq') || (e.DISKSEQ ?? '')),
    byId: id.byId.map((n) => n + suffix),
    byPath: id.byPath ? id.byPath + suffix : '',
  };
}

/** DEVNAME as a path under /dev: relative, no '.' or '..' parts, no odd characters; else the kernel name. */
function safeDevname(devname: string | undefined, name: string): string {
  if (!devname || !/^[A-Za-z0-9._+:@\-/]+$/.test(devname) || devname.startsWith('/')) return name;
  return devname.split('/').some((c) => c === '' || c === '.' || c === '..') ? name : devname;
}

interface Identity {
  attrs: Pick<SysBlockDevice, 'vendor' | 'model' | 'serial' | 'wwid' | 'modalias' | 'transport' | 'busPath'>;
  byId: string[];
  byPath: string;
}

/** A disk's identity and persistent names (its partitions add '-partN'). */
function identity(sysRoot: string, devpath: string): Identity {
  const dir = path.join(sysRoot, devpath);
  const name = path.basename(devpath);
  const devDir = realDir(path.join(dir, 'device'));
  const root = realDir(sysRoot) ?? sysRoot;
  const devRel = devDir?.startsWith(root + '/') ? devDir.slice(root.length) : '';
  const busPath = devRel.startsWith('/devices/') ? devRel.slice('/devices'.length) : devpath.startsWith('/devices/virtual/') ? '/virtual' : '';
  const transport = transportOf(devpath);
  const d = devDir ?? path.join(dir, 'device');
  let model = attr(d, 'model') || attr(d, 'name');
  let vendor = attr(d, 'vendor');
  let serial = attr(dir, 'serial') || attr(d, 'serial') || vpdSerial(d);
  const wwid = attr(dir, 'wwid') || attr(d, 'wwid');
  const modalias = attr(d, 'modalias');
  const byId: string[] = [];
  const add = (prefix: string, ...parts: string[]) => {
    const clean = parts.map(sanitizeId).filter((p) => p !== '');
    if (clean.length === parts.length) byId.push(`${prefix}-${clean.join('_')}`);
  };
  const wwn = /^naa\.([0-9a-f]+)$/i.exec(wwid);
  switch (transport) {
    case 'virtio':
      vendor = vendor.startsWith('0x') ? '' : vendor; // virtio's "vendor" is the PCI vendor id
      add('virtio', serial);
      break;
    case 'nvme':
      add('nvme', model, serial);
      if (wwid) add('nvme', wwid);
      break;
    case 'sata':
      add('ata', model, serial);
      if (wwn) byId.push(`wwn-0x${wwn[1]!.toLowerCase()}`);
      break;
    case 'scsi':
      add('scsi', vendor, model, serial);
      if (wwn) byId.push(`wwn-0x${wwn[1]!.toLowerCase()}`);
      break;
    case 'usb': {
      // udev's usb_id: vendor and model from the SCSI inquiry, the serial from the USB device.
      const usb = usbDevice(d);
      if (usb) serial = attr(usb, 'serial') || serial;
      if (!model && usb) model = attr(usb, 'product');
      if (!vendor && usb) vendor = attr(usb, 'manufacturer');
      const lun = /:(\d+)$/.exec(path.basename(d))?.[1] ?? '0';
      if (serial) byId.push(`usb-${[vendor, model, serial].map(sanitizeId).filter((p) => p !== '').join('_')}-0:${lun}`);
      break;
    }
    case 'mmc':
      add('mmc', model, serial);
      break;
  }
  return {
    attrs: { vendor, model, serial, wwid, modalias, transport, busPath },
    byId,
    byPath: pathId(sysRoot, devpath, name),
  };
}

function realDir(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

/** The unit serial number VPD page (0x80) the SCSI layer caches for a device. */
function vpdSerial(deviceDir: string): string {
  try {
    const b = fs.readFileSync(path.join(deviceDir, 'vpd_pg80'));
    if (b.length < 4 || b[1] !== 0x80) return '';
    const len = b.readUInt16BE(2);
    return b.subarray(4, 4 + len).toString('latin1').replace(/\0/g, '').trim();
  } catch {
    return '';
  }
}

function usbDevice(deviceDir: string): string | undefined {
  for (let d = deviceDir; d !== '/' && d !== '.'; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'idVendor'))) return d;
  }
  return undefined;
}

/** The transport a disk is on, from its path under /sys. */
export function transportOf(devpath: string): string {
  const p = devpath;
  if (p.startsWith('/devices/virtual/')) return '';
  if (/\/usb[0-9]+\//.test(p)) return 'usb';
  if (/\/nvme[0-9]+\//.test(p) || /\/nvme-subsys[0-9]+\//.test(p)) return 'nvme';
  if (/\/ata[0-9]+\//.test(p)) return 'sata';
  if (/\/mmc[0-9]+\//.test(p)) return 'mmc';
  if (/\/host[0-9]+\/target/.test(p)) return 'scsi';
  if (/\/virtio[0-9]+\//.test(p)) return 'virtio';
  if (/\/(xen|vbd-)/.test(p)) return 'xen';
  return '';
}

const PCI_RE = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;
const HCTL_RE = /^(\d+):(\d+):(\d+):(\d+)$/;

/**
 * udev's path_id for a disk: the innermost PCI function (or platform device) and the bus
 * address below it, e.g. 'pci-0000:00:04.0', 'pci-0000:00:1f.2-ata-1.0',
 * 'pci-0000:01:00.0-nvme-1', 'pci-0000:00:14.0-usb-0:1:1.0-scsi-0:0:0:0'. '' for virtual devices.
 */
export function pathId(sysRoot: string, devpath: string, name: string): string {
  const comps = devpath.split('/').filter((c) => c !== '');
  if (comps[0] !== 'devices' || comps[1] === 'virtual') return '';
  const parts: string[] = [];
  let anchored = false;
  let i = comps.length - 1;
  if (comps[i] === name) i--;
  if (comps[i] === 'block') i--;
  for (; i >= 1 && !anchored; i--) {
    const c = comps[i]!;
    const hctl = HCTL_RE.exec(c);
    if (hctl) {
      const [, h, ch, t, l] = hctl;
      const above = comps.slice(0, i);
      const ata = above.map((x) => /^ata(\d+)$/.exec(x)).find((m) => m);
      if (ata && !above.some((x) => /^usb\d+$/.test(x))) {
        parts.unshift(ch !== '0' ? `ata-${ata[1]}.${ch}.0` : `ata-${ata[1]}.${t}`);
      } else {
        const hostIdx = above.findIndex((x) => x === `host${h}`);
        const base = hostIdx > 0 ? lowestHost(path.join(sysRoot, ...above.slice(0, hostIdx))) : Number(h);
        parts.unshift(`scsi-${Number(h) - base}:${ch}:${t}:${l}`);
      }
      continue;
    }
    if (/^nvme\d+n(\d+)$/.test(name) && /^nvme\d+$/.test(c) && !parts.some((p) => p.startsWith('nvme-'))) {
      parts.unshift(`nvme-${/n(\d+)$/.exec(name)![1]}`);
      continue;
    }
    const usbIf = /^\d+-([\d.]+):(\d+\.\d+)$/.exec(c);
    if (usbIf) {
      if (!parts.some((p) => p.startsWith('usb-'))) parts.unshift(`usb-0:${usbIf[1]}:${usbIf[2]}`);
      continue;
    }
    if (PCI_RE.test(c)) {
      parts.unshift(`pci-${c}`);
      anchored = true;
      continue;
    }
    if ((comps[i - 1] === 'platform' && i >= 2) || subsystemOf(path.join(sysRoot, ...comps.slice(0, i + 1))) === 'platform') {
      parts.unshift(`platform-${c}`);
      anchored = true;
      continue;
    }
    // Transparent: virtioN, hostN, targetH:C:T, nvme class dirs, usb hubs and ports, mmc hosts.
  }
  return anchored ? parts.join('-') : '';
}

function subsystemOf(dir: string): string {
  try {
    return path.basename(fs.readlinkSync(path.join(dir, 'subsystem')));
  } catch {
    return '';
  }
}

function lowestHost(dir: string): number {
  let min = Infinity;
  try {
    for (const e of fs.readdirSync(dir)) {
      const m = /^host(\d+)$/.exec(e);
      if (m) min = Math.min(min, Number(m[1]));
    }
  } catch {
    /* no listing: treat as base 0 */
  }
  return Number.isFinite(min) ? min : 0;
}

/**
 * udev's treatment of an identifier for a by-id name: white space trimmed, inner runs made one
 * '_', and anything but ASCII letters and digits, '#+-.:=@_' and valid UTF-8 made '_'.
 */
export function sanitizeId(s: string): string {
  const collapsed = s.trim().replace(/\s+/gu, '_');
  let out = '';
  for (const ch of collapsed) {
    out += /^[A-Za-z0-9#+\-.:=@_]$/.test(ch) || ch.codePointAt(0)! > 0x7f ? ch : '_';
  }
  return out.replace(/\uFFFD/gu, '_');
}
