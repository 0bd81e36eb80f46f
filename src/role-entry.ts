// What every role bundle exports (image-builder/bundle.ts makes one per role, each from a
// two-line module that imports the role's main and this): load the native module if the role
// makes syscalls through it (src/roles.ts NATIVE_ROLES), then run. Those roles also give the
// C heap's free pages back now and then (src/lib/malloc-trim.ts).
import { maybeProfile } from './lib/boot-profile.ts';
import { trimWhileRunning } from './lib/malloc-trim.ts';
import { initNative } from './lib/native.ts';
import { NATIVE_LOADED, NATIVE_START } from './lib/startup.ts';
import type { EarlyChildren } from './machined/early.ts';

/** What the main script hands a role: machined as PID 1 gets the services it started first. */
export interface RoleHandoff {
  firstServices?: EarlyChildren;
  /** The role's name (for `bronze.profile=`, src/lib/boot-profile.ts). */
  role?: string;
}

export function roleEntry(main: (handoff: RoleHandoff) => Promise<void>, native: boolean): { start(handoff?: RoleHandoff): Promise<void> } {
  return {
    async start(handoff = {}) {
      if (handoff.role) await maybeProfile(handoff.role);
      if (native) {
        performance.mark(NATIVE_START);
        const koffi = await initNative();
        performance.mark(NATIVE_LOADED);
        trimWhileRunning(koffi);
      }
      await main(handoff);
    },
  };
}
