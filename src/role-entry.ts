// What every role bundle exports (image-builder/bundle.ts makes one per role, each from a
// two-line module that imports the role's main and this): load the native module if the role
// makes syscalls through it (src/roles.ts NATIVE_ROLES), then run. Every role gives the pages
// of the SEA blob it read back once loaded (src/lib/sea-blob.ts, done by initNative) and the C
// heap's free pages now and then (src/lib/malloc-trim.ts); both need koffi, which the other
// roles (apid, trustd) load only for that, once start-up has settled (TRIM_SCHEDULE.firstMs):
// their start does not wait for it, and their blob pages (their bundle and its code cache,
// 2-5 MiB each in a boot's PSS by mapping) go back all the same.
import { maybeProfile } from './lib/boot-profile.ts';
import { TRIM_SCHEDULE, trimWhileRunning } from './lib/malloc-trim.ts';
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
      } else {
        const later = setTimeout(() => {
          initNative()
            .then((koffi) => trimWhileRunning(koffi, { firstMs: 0, everyMs: TRIM_SCHEDULE.everyMs }))
            .catch((err: Error) => process.stderr.write(`bronze: koffi for releasing memory: ${err.message}\n`));
        }, TRIM_SCHEDULE.firstMs);
        later.unref();
      }
      await main(handoff);
    },
  };
}
