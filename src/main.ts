// The one binary's entry point, and all the single executable's main script holds: it picks
// the role and loads only that role's bundle (src/lib/role-source.ts): inside the single
// executable the SEA asset `<role>.cjs`, compiled with the V8 code cache made for it at build
// time; in a plain Node run the file `<role>.cjs` beside this one (image-builder/bundle.ts
// --roles writes both).
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadBundle, optimizeFrom } from './lib/role-source.ts';
import { maybeRecordBootFunctions } from './lib/boot-functions.ts';
import { FIRST_SERVICES_START, FIRST_SERVICES_STARTED, ROLE_LOADED, ROLE_LOAD_START } from './lib/startup.ts';
import { pickRole, roleNames, roleOf } from './roles.ts';
import type { RoleHandoff } from './role-entry.ts';
import { firstServicesAtFullPriority, startFirstServices } from './machined/early.ts';
import { checkReadyFd } from './lib/ready.ts';

interface RoleModule {
  start(handoff: RoleHandoff): Promise<void>;
}

async function run(): Promise<void> {
  checkReadyFd(); // before this process opens any descriptor of its own (lib/ready.ts)
  const picked = pickRole(process.argv0, process.argv);
  const role = picked && roleOf(picked.role);
  if (!role) {
    process.stderr.write(`bronze: unknown role '${path.basename(process.argv0)}'; run as one of: ${roleNames().join(', ')}\n`);
    process.exit(2);
  }
  // PID 1 starts the services the API needs before it loads its own code (machined/early.ts).
  let handoff: RoleHandoff = { role };
  if (role === 'machined' && process.pid === 1) {
    performance.mark(FIRST_SERVICES_START);
    handoff = { role, firstServices: startFirstServices() };
    performance.mark(FIRST_SERVICES_STARTED);
  }
  performance.mark(ROLE_LOAD_START);
  // bronze.debug.bootfunctions: the recording boot of `make boot-functions` (lib/boot-functions.ts).
  const mod = loadBundle<RoleModule>(role, __dirname, require, (url, source) => maybeRecordBootFunctions(role, url, source));
  performance.mark(ROLE_LOADED);
  firstServicesAtFullPriority(handoff.firstServices);
  optimizeFrom(role, 'loaded');
  await mod.start(handoff);
}

run().catch((err: unknown) => {
  process.stderr.write(`bronze: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
