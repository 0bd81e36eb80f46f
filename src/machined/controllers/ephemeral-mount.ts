// EphemeralMountController: the mount options of EPHEMERAL (/var) from a VolumeConfig document
// (Talos's `mount.disableAccessTime`: noatime). /var is always nosuid and nodev (Talos's
// `mount.secure`, which validation takes only as true); this remounts it when the options change.
import { ephemeralMount } from '../../config/accessors/volumes.ts';
import type { Controller } from '../../state/controller.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, type MachineConfigSpec, type TypedMachineConfig } from '../../contract/resources/machine-config.ts';

/** Remounts `target` with these mount(2) flags (MS_REMOUNT is added by the caller's implementation). */
export type Remount = (target: string, noatime: boolean) => void;

/** Whether the configuration asks for EPHEMERAL without access times. */
export function ephemeralNoatime(spec: TypedMachineConfig | undefined): boolean {
  return ephemeralMount(spec).disableAccessTime;
}

export function ephemeralMountController(remount: Remount, target = '/var'): Controller {
  let applied = false; // the boot mount is relatime
  return {
    name: 'EphemeralMountController',
    inputs: [{ namespace: MACHINE_CONFIG_NS, type: MACHINE_CONFIG_TYPE, kind: 'weak' }],
    outputs: [],
    async run(ctx) {
      const cfg = await ctx.state.find<MachineConfigSpec>(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID);
      const want = ephemeralNoatime(cfg?.spec);
      if (want === applied) return;
      remount(target, want);
      applied = want;
      ctx.log.info(`EPHEMERAL (${target}) remounted nosuid,nodev,${want ? 'noatime' : 'relatime'}`);
    },
  };
}
