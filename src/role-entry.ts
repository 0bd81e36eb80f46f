// What every role bundle exports (image-builder/bundle.ts makes one per role, each from a
// two-line module that imports the role's main and this): load the native module if the role
// makes syscalls through it (src/roles.ts NATIVE_ROLES), then run.
import { initNative } from './lib/native.ts';
import type { EarlyChildren } from './machined/early.ts';

/** What the main script hands a role: machined as PID 1 gets the services it started first. */
export interface RoleHandoff {
  firstServices?: EarlyChildren;
}

export function roleEntry(main: (handoff: RoleHandoff) => Promise<void>, native: boolean): { start(handoff?: RoleHandoff): Promise<void> } {
  return {
    async start(handoff = {}) {
      if (native) await initNative();
      await main(handoff);
    },
  };
}
