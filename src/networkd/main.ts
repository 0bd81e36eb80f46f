// networkd: links, addresses, routes, DHCPv4, hostname and resolvers over rtnetlink.
// For now it serves health and Version on its unix socket (/system/run/networkd/networkd.sock).
import { StderrLogger } from '../lib/log.ts';
import { runDaemon, serveDaemon } from '../daemon/serve.ts';

export async function main(): Promise<void> {
  const log = new StderrLogger('networkd');
  await runDaemon('networkd', log, () => serveDaemon('networkd', log));
}
