// RootfsStatuses.runtime.bronze.dev, id 'rootfs': Bronze's own (Talos has no verified root
// outside a Secure Boot UKI, and SecurityStates.talos.dev carries no field for it): the device
// "/" is mounted from and whether the kernel verifies it with dm-verity, under which root hash.
// machined reads it from the kernel (src/machined/rootfs-status.ts).
import type { ResourceDefinition } from './definition.ts';

export interface RootfsStatusSpec {
  /** The device "/" is mounted from: '/dev/dm-0'. */
  device: string;
  filesystemType: string;
  /** A dm-verity target without a corrupted block, under the root hash the node booted with. */
  verified: boolean;
  mapperName?: string;
  rootHash?: string;
  hashAlgorithm?: string;
  dataBlockSize?: number;
  dataBlocks?: number;
  /** The verity target's own status: 'verified' or 'corrupted'. */
  status?: string;
  /** bronze.roothash= on the kernel command line. */
  expectedRootHash?: string;
  /** Why the root does not count as verified. */
  reason?: string;
}

export const ROOTFS_STATUS_TYPE = 'RootfsStatuses.runtime.bronze.dev';
export const ROOTFS_STATUS_ID = 'rootfs';

export const rootfsStatusDefinition: ResourceDefinition<RootfsStatusSpec> = {
  type: ROOTFS_STATUS_TYPE,
  displayType: 'RootfsStatus',
  // Its automatic initials, 'rs', would name Talos's ResolverStatuses and RouteStatuses too.
  aliases: ['rootfs', 'rootfsstatus', 'rootfsstatuses', 'verity'],
  skipAutomaticAliases: true,
  defaultNamespace: 'runtime',
  owner: 'machined',
  printColumns: [
    { name: 'Device', jsonPath: '{.device}' },
    { name: 'Verified', jsonPath: '{.verified}' },
    { name: 'Root Hash', jsonPath: '{.rootHash}' },
  ],
  proto: {
    message: 'bronze.resource.definitions.runtime.RootfsStatusSpec',
  },
};
