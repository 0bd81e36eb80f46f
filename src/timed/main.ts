// timed: the SNTP client that steps and slews the clock.
// For now it serves health and Version on its unix socket (/system/run/timed/timed.sock).
import { StderrLogger } from '../lib/log.ts';
import { runDaemon, serveDaemon } from '../daemon/serve.ts';

export async function main(): Promise<void> {
  const log = new StderrLogger('timed');
  await runDaemon('timed', log, () => serveDaemon('timed', log));
}
