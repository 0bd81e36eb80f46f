// A fake /sys for tests: block devices under devices/ with the attributes udevd reads, and the
// class/block links to them, as the kernel lays them out for each transport.
import fs from 'node:fs';
import path from 'node:path';

export interface FakeDisk {
  name: string;
  /** Parent directory of `block/<name>` (or of the disk itself for nvme), under devices/. */
  at: string;
  /** The device directory `device` points at, relative to devices/ (default: `at`). */
  device?: string;
  sectors: number;
  major: number;
  minor: number;
  /** Files in the disk's directory (e.g. serial, wwid). */
  attrs?: Record<string, string>;
  /** Files in the device directory (model, vendor, wwid, serial, vpd_pg80). */
  deviceAttrs?: Record<string, string | Buffer>;
  /** nvme namespaces sit directly under the controller, not in block/. */
  noBlockDir?: boolean;
  rotational?: boolean;
  partitions?: Array<{ number: number; start: number; sectors: number; partname?: string }>;
}

export function write(file: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

/** Adds a disk (and its partitions) to the fake tree at sysRoot; returns the disk's devpath. */
export function addFakeDisk(sysRoot: string, d: FakeDisk): string {
  const devpath = d.noBlockDir ? `/devices/${d.at}/${d.name}` : `/devices/${d.at}/block/${d.name}`;
  const dir = path.join(sysRoot, devpath);
  write(path.join(dir, 'dev'), `${d.major}:${d.minor}\n`);
  write(path.join(dir, 'size'), `${d.sectors}\n`);
  write(path.join(dir, 'ro'), '0\n');
  write(path.join(dir, 'removable'), '0\n');
  write(path.join(dir, 'hidden'), '0\n');
  write(path.join(dir, 'queue', 'rotational'), d.rotational ? '1\n' : '0\n');
  write(path.join(dir, 'queue', 'logical_block_size'), '512\n');
  write(path.join(dir, 'queue', 'minimum_io_size'), '512\n');
  write(path.join(dir, 'uevent'), `MAJOR=${d.major}\nMINOR=${d.minor}\nDEVNAME=${d.name}\nDEVTYPE=disk\nDISKSEQ=7\n`);
  for (const [k, v] of Object.entries(d.attrs ?? {})) write(path.join(dir, k), v);
  if (!d.at.startsWith('virtual')) {
    const devDir = path.join(sysRoot, 'devices', d.device ?? d.at);
    fs.mkdirSync(devDir, { recursive: true });
    for (const [k, v] of Object.entries(d.deviceAttrs ?? {})) write(path.join(devDir, k), v);
    fs.symlinkSync(path.relative(dir, devDir), path.join(dir, 'device'));
  }
  link(sysRoot, d.name, devpath);
  for (const p of d.partitions ?? []) {
    const pname = /\d$/.test(d.name) ? `${d.name}p${p.number}` : `${d.name}${p.number}`;
    const pdir = path.join(dir, pname);
    write(path.join(pdir, 'dev'), `${d.major}:${d.minor + p.number}\n`);
    write(path.join(pdir, 'size'), `${p.sectors}\n`);
    write(path.join(pdir, 'start'), `${p.start}\n`);
    write(path.join(pdir, 'partition'), `${p.number}\n`);
    write(path.join(pdir, 'ro'), '0\n');
    write(
      path.join(pdir, 'uevent'),
      `MAJOR=${d.major}\nMINOR=${d.minor + p.number}\nDEVNAME=${pname}\nDEVTYPE=partition\nDISKSEQ=7\nPARTN=${p.number}\n${p.partname ? `PARTNAME=${p.partname}\n` : ''}`,
    );
    link(sysRoot, pname, `${devpath}/${pname}`);
  }
  return devpath;
}

function link(sysRoot: string, name: string, devpath: string): void {
  const cls = path.join(sysRoot, 'class', 'block');
  fs.mkdirSync(cls, { recursive: true });
  fs.symlinkSync(path.relative(cls, path.join(sysRoot, devpath)), path.join(cls, name));
}

/** Removes a disk and its partitions from the tree (as the kernel does on unplug). */
export function removeFakeDisk(sysRoot: string, devpath: string): void {
  const cls = path.join(sysRoot, 'class', 'block');
  const name = path.basename(devpath);
  for (const e of fs.readdirSync(cls)) if (e === name || e.startsWith(name)) fs.rmSync(path.join(cls, e), { force: true });
  fs.rmSync(path.join(sysRoot, devpath), { recursive: true, force: true });
}

/** vpd_pg80 contents: the unit serial number page. */
export function vpd80(serial: string): Buffer {
  const s = Buffer.from(serial, 'latin1');
  return Buffer.concat([Buffer.from([0, 0x80, s.length >> 8, s.length & 0xff]), s]);
}

/** One disk of each transport udevd knows. */
export function populate(sysRoot: string): Record<string, string> {
  const usbDev = path.join(sysRoot, 'devices/pci0000:00/0000:00:14.0/usb1/1-1');
  write(path.join(usbDev, 'idVendor'), '0781\n');
  write(path.join(usbDev, 'serial'), '4C530001\n');
  write(path.join(usbDev, 'manufacturer'), 'SanDisk\n');
  const paths = {
    vda: addFakeDisk(sysRoot, {
      name: 'vda',
      at: 'pci0000:00/0000:00:04.0/virtio2',
      sectors: 16384,
      major: 252,
      minor: 0,
      attrs: { serial: 'BRONZE-DISK-1\n' },
      deviceAttrs: { vendor: '0x1af4\n', modalias: 'virtio:d00000002v00001AF4\n' },
      partitions: [
        { number: 1, start: 2048, sectors: 4096, partname: 'EFI' },
        { number: 2, start: 6144, sectors: 8192 },
      ],
    }),
    nvme0n1: addFakeDisk(sysRoot, {
      name: 'nvme0n1',
      at: 'pci0000:00/0000:01:00.0/nvme/nvme0',
      noBlockDir: true,
      sectors: 2000409264,
      major: 259,
      minor: 0,
      attrs: { wwid: 'eui.0025388b71b45b17\n' },
      deviceAttrs: { model: 'Samsung SSD 970 EVO 1TB                 \n', serial: '  S467NX0M123456     \n' },
      partitions: [{ number: 1, start: 2048, sectors: 1048576 }],
    }),
    sda: addFakeDisk(sysRoot, {
      name: 'sda',
      at: 'pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0',
      sectors: 41943040,
      major: 8,
      minor: 0,
      rotational: true,
      deviceAttrs: { vendor: 'ATA     \n', model: 'QEMU HARDDISK   \n', wwid: 'naa.5000C500A1B2C3D4\n', vpd_pg80: vpd80('QM00001'), type: '0\n' },
    }),
    sdb: addFakeDisk(sysRoot, {
      name: 'sdb',
      at: 'pci0000:00/0000:00:05.0/virtio3/host2/target2:0:1/2:0:1:0',
      sectors: 2097152,
      major: 8,
      minor: 16,
      deviceAttrs: { vendor: 'QEMU    \n', model: 'QEMU HARDDISK   \n', vpd_pg80: vpd80('drive-scsi0') },
    }),
    sdc: addFakeDisk(sysRoot, {
      name: 'sdc',
      at: 'pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/host4/target4:0:0/4:0:0:0',
      sectors: 62521344,
      major: 8,
      minor: 32,
      attrs: { removable: '1\n' },
      deviceAttrs: { vendor: 'SanDisk \n', model: 'Ultra           \n' },
    }),
    sr0: addFakeDisk(sysRoot, {
      name: 'sr0',
      at: 'pci0000:00/0000:00:1f.2/ata2/host1/target1:0:0/1:0:0:0',
      sectors: 0,
      major: 11,
      minor: 0,
      deviceAttrs: { vendor: 'QEMU    \n', model: 'QEMU DVD-ROM    \n', type: '5\n' },
    }),
    mmcblk0: addFakeDisk(sysRoot, {
      name: 'mmcblk0',
      at: 'platform/fe340000.mmc/mmc_host/mmc0/mmc0:0001',
      sectors: 62333952,
      major: 179,
      minor: 0,
      deviceAttrs: { name: 'SD32G\n', serial: '0x12345678\n' },
    }),
    loop0: addFakeDisk(sysRoot, { name: 'loop0', at: 'virtual', sectors: 0, major: 7, minor: 0 }),
  };
  return paths;
}
