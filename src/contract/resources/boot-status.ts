// BootStatuses.runtime.bronze.dev, id 'boot': Bronze's own (Talos has no A/B slots like these):
// the slot booted, GRUB's default and next, each slot's version and the last upgrade, as machined
// reads them from BOOT and META (src/machined/lifecycle/status.ts).
import type { ResourceDefinition } from './definition.ts';

export interface BootStatusSpec {
  installed: boolean;
  /** The disk Bronze is installed on. */
  disk?: string;
  /** 'A', 'B', or '' when not booted from a slot. */
  booted: string;
  version: string;
  /** The slot GRUB boots by default. */
  default?: string;
  /** The slot GRUB tries once on the next boot, '' for none. */
  next?: string;
  /** Each slot: whether it holds an image, its version, and why its last boot stopped before machined (preinit's record), if it did. */
  slots?: Record<string, { present: boolean; version: string; failure?: string }>;
  upgrade?: { state: string; from?: string; to?: string; version?: string; time?: string; error?: string };
  rollback?: { state: string; from?: string; to?: string; version?: string; time?: string; error?: string };
  /** The latest upgrade or rollback, in a few words. */
  last?: string;
  /** The install the node last attempted, until it reboots. */
  install?: { state: string; disk: string; error?: string; time?: string };
}

export const BOOT_STATUS_TYPE = 'BootStatuses.runtime.bronze.dev';
export const BOOT_STATUS_ID = 'boot';

export const bootStatusDefinition: ResourceDefinition<BootStatusSpec> = {
  type: BOOT_STATUS_TYPE,
  displayType: 'BootStatus',
  // Its automatic initials, 'bs', would name Talos's BlockSymlinks too: the names are spelled out.
  aliases: ['boot', 'bootstatus', 'bootstatuses'],
  skipAutomaticAliases: true,
  defaultNamespace: 'runtime',
  owner: 'machined',
  printColumns: [
    { name: 'Booted', jsonPath: '{.booted}' },
    { name: 'Default', jsonPath: '{.default}' },
    { name: 'Next', jsonPath: '{.next}' },
    // Not "Version": the table has the resource's own VERSION column already.
    { name: 'Running Version', jsonPath: '{.version}' },
    { name: 'Last Change', jsonPath: '{.last}' },
  ],
  proto: {
    message: 'bronze.resource.definitions.runtime.BootStatusSpec',
  },
};
