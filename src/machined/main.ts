// machined: PID 1. Mounts the runtime filesystems, sets the hostname, supervises the daemons,
// reaps orphans, and turns SIGTERM, SIGINT (ctrl-alt-del) and the ACPI power button into an
// orderly shutdown. Outside PID 1 (a host run) it only supervises, which tests use.
//
// Where to read on: node.ts builds machined's parts, registrations.ts lists its controllers and
// publishers, sequences.ts says which tasks each sequence runs in which order, and boot-tasks.ts
// is what each task does.
import { KmsgLogger } from '../lib/log.ts';
import { VERSION } from '../version.ts';
import { startupTimes } from '../lib/startup.ts';
import type { RoleHandoff } from '../role-entry.ts';
import { MachinedNode } from './node.ts';
import { bootTasks } from './boot-tasks.ts';

export async function main(handoff: RoleHandoff = {}): Promise<void> {
  const pid1 = process.pid === 1;
  const log = new KmsgLogger('machined', pid1);
  log.info(`machined ${VERSION.tag} (${VERSION.sha}) starting as PID ${process.pid} on Node ${process.version} (${startupTimes()})`);
  const node = new MachinedNode({ pid1, log, handoff, tasks: bootTasks });

  process.on('SIGTERM', () => void node.request('shutdown', 'SIGTERM'));
  process.on('SIGINT', () => void node.request('shutdown', pid1 ? 'ctrl-alt-del (SIGINT)' : 'SIGINT'));
  // PID 1 must not die: the kernel would panic. Log and carry on.
  process.on('uncaughtException', (err) => log.error(`uncaught: ${err.stack ?? err.message}`));
  process.on('unhandledRejection', (err) => log.error(`unhandled rejection: ${(err as Error)?.stack ?? String(err)}`));

  await node.boot();
}
