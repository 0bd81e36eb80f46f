// bronzectl, the full CLI: run(argv, io) is the whole of it, callable in-process (tests) and from
// main.ts (the bundle that runs every command). The command tree is program.ts; this adds the
// loaders of the modules commands import only when they run (lazy.ts), which the front
// (front.ts) leaves out.
import { setLoaders } from './lazy.ts';
import { HAND_OFF, runProgram } from './program.ts';
import type { IO } from './session.ts';

export type { IO } from './session.ts';
export type { Ctx } from './session.ts';
export { buildProgram } from './program.ts';
export { intArg, listArg } from './args.ts';

setLoaders({
  client: () => import('../client/index.ts'),
  clientConfig: () => import('../contract/clientconfig.ts'),
  secrets: () => import('../contract/secrets.ts'),
  certs: () => import('../pki/certs.ts'),
  protos: () => import('../contract/protos.ts'),
  configPatch: () => import('../config/patch.ts'),
  machineconfig: () => import('./commands/machineconfig-impl.ts'),
  edit: () => import('./commands/edit-impl.ts'),
  get: () => import('./commands/get-impl.ts'),
  cp: () => import('./commands/cp-impl.ts'),
  pcap: () => import('./commands/pcap-impl.ts'),
  health: () => import('./commands/health-impl.ts'),
  cluster: () => import('./commands/cluster-impl.ts'),
  upgrade: () => import('./commands/upgrade-impl.ts'),
  gen: () => import('./commands/gen-impl.ts'),
});

/** Runs bronzectl with `argv` (without the program name); resolves to the exit code. */
export async function run(argv: string[], io: Partial<IO> = {}): Promise<number> {
  const code = await runProgram(argv, io);
  if (code === HAND_OFF) throw new Error('bronzectl: the full CLI cannot hand off');
  return code;
}
