// trustd: signs certificates for nodes presenting the join token (control plane, :50001).
// For now it serves health and Version on its unix socket (/system/run/trustd/trustd.sock).
import { StderrLogger } from '../lib/log.ts';
import { runDaemon, serveDaemon } from '../daemon/serve.ts';

export async function main(): Promise<void> {
  const log = new StderrLogger('trustd');
  await runDaemon('trustd', log, () => serveDaemon('trustd', log));
}
