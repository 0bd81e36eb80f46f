// udevd: kernel uevents, coldplug and the /dev/disk/by-* links.
// For now it serves health and Version on its unix socket (/system/run/udevd/udevd.sock).
import { StderrLogger } from '../lib/log.ts';
import { runDaemon, serveDaemon } from '../daemon/serve.ts';

export async function main(): Promise<void> {
  const log = new StderrLogger('udevd');
  await runDaemon('udevd', log, () => serveDaemon('udevd', log));
}
