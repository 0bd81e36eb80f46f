// BlockSymlinks.block.talos.dev: the /dev/disk/by-* links of each block device, id the kernel
// name. udevd writes them (it makes the links). Talos: pkg/machinery/resources/block/symlink.go.
import type { ResourceDefinition } from './definition.ts';
import { BLOCK_NAMESPACE } from './disk.ts';

export interface BlockSymlinkSpec {
  /** Absolute: '/dev/disk/by-label/STATE', ... */
  paths: string[];
}

export const BLOCK_SYMLINK_TYPE = 'BlockSymlinks.block.talos.dev';

export const blockSymlinkDefinition: ResourceDefinition<BlockSymlinkSpec> = {
  type: BLOCK_SYMLINK_TYPE,
  displayType: 'BlockSymlink',
  aliases: [],
  defaultNamespace: BLOCK_NAMESPACE,
  owner: 'udevd',
  printColumns: [],
  proto: {
    message: 'talos.resource.definitions.block.SymlinkSpec',
  },
};
