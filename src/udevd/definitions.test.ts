import { describe, expect, it } from 'vitest';
import { DefinitionRegistry, bronzeDefinitions, registerDefinitions } from '../state/definitions.ts';
import { TYPE_OWNERS } from '../contract/owners.ts';
import { BLOCK_DEVICE_TYPE, DISK_TYPE, deviceDefinitions, prettySize } from './definitions.ts';

describe('deviceDefinitions', () => {
  it('register beside the others and resolve as talosctl names them', () => {
    const reg = new DefinitionRegistry();
    registerDefinitions(reg, [...bronzeDefinitions, ...deviceDefinitions]);
    for (const n of ['disks', 'disk', 'Disk', 'disks.block.bronze.dev']) expect(reg.resolve(n).type).toBe(DISK_TYPE);
    for (const n of ['blockdevices', 'blockdevice', 'bd']) expect(reg.resolve(n).type).toBe(BLOCK_DEVICE_TYPE);
    expect(reg.resolve('disks').printColumns.map((c) => c.name)).toEqual(['Size', 'Read Only', 'Transport', 'Rotational', 'WWID', 'Model', 'Serial']);
  });

  it('are owned by udevd', () => {
    for (const d of deviceDefinitions) expect(TYPE_OWNERS[d.type]).toBe('udevd');
  });
});

describe('prettySize', () => {
  it.each([
    [0, '0 B'],
    [9, '9 B'],
    [512, '512 B'],
    [1536, '1.5 kB'],
    [67108864, '67 MB'],
    [8388608, '8.4 MB'],
    [10737418240, '11 GB'],
    [1000204886016, '1.0 TB'],
  ])('%d → %s', (n, s) => expect(prettySize(n)).toBe(s));
});
