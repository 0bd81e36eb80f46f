// Which daemon owns which resource type, as data. Daemons publish into machined's state over
// its unix socket, naming themselves; machined lets each write only the types it owns, and
// nothing is writable through apid (see src/machined/api/resources.ts).
export const TYPE_OWNERS: Readonly<Record<string, string>> = {
  // networkd
  'Links.net.bronze.dev': 'networkd',
  'AddressStatuses.net.bronze.dev': 'networkd',
  'RouteStatuses.net.bronze.dev': 'networkd',
  'ResolverStatuses.net.bronze.dev': 'networkd',
  'HostnameStatuses.net.bronze.dev': 'networkd',
  'TimeServerStatuses.net.bronze.dev': 'networkd',
  'NodeAddresses.net.bronze.dev': 'networkd',
  // timed
  'TimeStatuses.runtime.bronze.dev': 'timed',
  // udevd
  'Disks.block.bronze.dev': 'udevd',
  'BlockDevices.block.bronze.dev': 'udevd',
};

/** gRPC metadata key in which a local daemon names itself when it writes resources. */
export const OWNER_METADATA_KEY = 'bronze-owner';

export function mayWrite(owner: string, type: string): boolean {
  return owner !== '' && TYPE_OWNERS[type] === owner;
}
