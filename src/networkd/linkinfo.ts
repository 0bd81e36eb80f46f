// What sysfs says of a network link that rtnetlink does not: the driver, and the speed and duplex
// the driver reports (what Talos reads through ethtool for LinkStatus). Only what the files
// say: a value the kernel does not give (no driver, speed -1) is left out.
import fs from 'node:fs';
import path from 'node:path';
import type { LinkSysInfo } from './resources.ts';

const DUPLEX: Record<string, string> = { full: 'Full', half: 'Half', unknown: 'Unknown' };

function read(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined; // absent, or EINVAL (no carrier)
  }
}

/** The link's sysfs facts under `sysRoot` (/sys/class/net/<name>/...). */
export function readLinkSysInfo(name: string, sysRoot = '/sys'): LinkSysInfo {
  const dir = path.join(sysRoot, 'class', 'net', name);
  const out: LinkSysInfo = {};
  try {
    out.driver = path.basename(fs.readlinkSync(path.join(dir, 'device', 'driver')));
  } catch {
    /* a virtual link: no device, no driver */
  }
  const speed = Number(read(path.join(dir, 'speed')));
  if (Number.isInteger(speed) && speed > 0) out.speedMbit = speed;
  const duplex = DUPLEX[read(path.join(dir, 'duplex')) ?? ''];
  if (duplex) out.duplex = duplex;
  return out;
}
