// What the end-to-end tests read of a disk image from the host, without mounting it.
import fs from 'node:fs';
import { planLayout, partitionByName } from '../../src/disk/layout.ts';

/**
 * The xfs UUID (sb_uuid: 16 bytes at offset 32 of the superblock) of a Bronze partition of a
 * disk image laid out for its size; a new filesystem (a wipe, a reset) has a new one.
 */
export function xfsUuid(disk: string, name: 'STATE' | 'EPHEMERAL'): string {
  const p = partitionByName(planLayout(fs.statSync(disk).size), name);
  const fd = fs.openSync(disk, 'r');
  try {
    const buf = Buffer.alloc(48);
    fs.readSync(fd, buf, 0, 48, p.offsetBytes);
    const magic = buf.subarray(0, 4).toString('latin1');
    if (magic !== 'XFSB') throw new Error(`${disk}: ${name} holds no xfs (magic ${JSON.stringify(magic)})`);
    return buf.subarray(32, 48).toString('hex');
  } finally {
    fs.closeSync(fd);
  }
}
