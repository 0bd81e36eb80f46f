// apid: the node's API gateway (mTLS on :50000, role checks, routing to local daemons and other nodes).
// For now it serves health and Version on its unix socket (/system/run/apid/apid.sock).
import { StderrLogger } from '../lib/log.ts';
import { runDaemon, serveDaemon } from '../daemon/serve.ts';

export async function main(): Promise<void> {
  const log = new StderrLogger('apid');
  await runDaemon('apid', log, () => serveDaemon('apid', log));
}
