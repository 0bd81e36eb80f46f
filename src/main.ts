// The one binary's entry point: picks the role, loads the native module, runs the role.
import path from 'node:path';
import { initNative } from './lib/native.ts';
import { ROLES, pickRole } from './roles.ts';

async function run(): Promise<void> {
  const picked = pickRole(process.argv0, process.argv);
  if (!picked) {
    process.stderr.write(`bronze: unknown role '${path.basename(process.argv0)}'; run as one of: ${Object.keys(ROLES).join(', ')}\n`);
    process.exit(2);
  }
  await initNative();
  await ROLES[picked.role]!();
}

run().catch((err: unknown) => {
  process.stderr.write(`bronze: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
