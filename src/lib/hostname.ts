// A stable default hostname until networkd knows better (config, DHCP): derived from the
// SMBIOS system UUID, else the first non-loopback MAC address, so it survives reboots.
// Networkd takes over the hostname (config, DHCP) with the network work.
import crypto from 'node:crypto';
import fs from 'node:fs';

export function stableHostname(seed: string | undefined): string {
  if (!seed) return 'bronze';
  return `bronze-${crypto.createHash('sha256').update(seed).digest('hex').slice(0, 6)}`;
}

export function hostnameSeed(sysNet = '/sys/class/net'): string | undefined {
  try {
    const uuid = fs.readFileSync('/sys/class/dmi/id/product_uuid', 'utf8').trim();
    if (uuid && !/^[0-]+$/.test(uuid)) return uuid;
  } catch {
    /* no SMBIOS (e.g. some arm64 boards) */
  }
  // Links are still down this early, so read their MACs from sysfs rather than os.networkInterfaces().
  try {
    for (const link of fs.readdirSync(sysNet).sort()) {
      const mac = fs.readFileSync(`${sysNet}/${link}/address`, 'utf8').trim();
      if (link !== 'lo' && mac && mac !== '00:00:00:00:00:00') return mac;
    }
  } catch {
    /* no sysfs */
  }
  return undefined;
}
