import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIN_DISK_BYTES } from '../../disk/layout.ts';
import type { BlockDisk } from './disks.ts';
import { checkInstallDisk, partitionDevice } from './installer.ts';

describe('checkInstallDisk', () => {
  let dir: string;
  const disk = (name: string, bytes: number, o: Partial<BlockDisk> = {}): BlockDisk => {
    const device = path.join(dir, name);
    fs.closeSync(fs.openSync(device, 'w'));
    fs.truncateSync(device, bytes);
    return { name, device, bytes, sectorSize: 512, readOnly: false, ...o };
  };
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-installer-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('accepts a blank disk big enough for the layout', async () => {
    const r = await checkInstallDisk(disk('vda', MIN_DISK_BYTES), false);
    expect(r.held).toBeUndefined();
    expect(r.layout.partitions.map((p) => p.name)).toEqual(['EFI', 'BIOS', 'BOOT', 'META', 'STATE', 'EPHEMERAL']);
  });

  it('refuses a disk too small, read-only, or holding data without wipe, saying why', async () => {
    await expect(checkInstallDisk(disk('small', 512 << 20), true)).rejects.toThrow(/small: disk of 536870912 bytes .* is too small/);
    await expect(checkInstallDisk(disk('ro', 2 * 1024 ** 3, { readOnly: true }), true)).rejects.toThrow(/ro is read-only/);
    const used = disk('used', 2 * 1024 ** 3);
    fs.writeFileSync(used.device, 'data', { flag: 'r+' });
    await expect(checkInstallDisk(used, false)).rejects.toThrow(/holds data \(non-zero bytes in its first MiB\): refusing .* --wipe/);
    expect((await checkInstallDisk(used, true)).held).toMatch(/non-zero/);
  });

  it('names partitions as the kernel does', () => {
    expect(partitionDevice({ name: 'vda', device: '/dev/vda', bytes: 0, sectorSize: 512, readOnly: false }, 3)).toBe('/dev/vda3');
    expect(partitionDevice({ name: 'nvme0n1', device: '/dev/nvme0n1', bytes: 0, sectorSize: 512, readOnly: false }, 3)).toBe('/dev/nvme0n1p3');
  });
});
