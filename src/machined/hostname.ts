// A stable default hostname until networkd knows better (config, DHCP): derived from the
// SMBIOS system UUID, else the first non-loopback MAC address, so it survives reboots.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';

export function stableHostname(seed: string | undefined): string {
  if (!seed) return 'bronze';
  return `bronze-${crypto.createHash('sha256').update(seed).digest('hex').slice(0, 6)}`;
}

export function hostnameSeed(): string | undefined {
  try {
    const uuid = fs.readFileSync('/sys/class/dmi/id/product_uuid', 'utf8').trim();
    if (uuid) return uuid;
  } catch {
    /* no SMBIOS (e.g. some arm64 boards) */
  }
  for (const addrs of Object.values(os.networkInterfaces())) {
    const mac = addrs?.find((a) => !a.internal && a.mac !== '00:00:00:00:00:00')?.mac;
    if (mac) return mac;
  }
  return undefined;
}
