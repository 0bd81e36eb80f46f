// udevd: kernel uevents, coldplug, the /dev/disk/by-* links, and the Disks and BlockDevices
// resources it publishes into machined's state over machined's socket. Serves health and
// Version on its own unix socket (/system/run/udevd/udevd.sock); health turns SERVING once
// coldplug is done, so the services that depend on udevd start with the disks known.
//
// On a node (machined, its parent, is PID 1) the links go to /dev and coldplug triggers every
// block device. A host run must not touch the host's /dev or make its devices re-announce
// themselves: there the links go under the run directory and coldplug only reads /sys.
// Overrides: BRONZE_DEV_ROOT, BRONZE_SYS_ROOT, BRONZE_UDEVD_TRIGGER=0|1.
import path from 'node:path';
import { runDir } from '../contract/paths.ts';
import { StderrLogger } from '../lib/log.ts';
import { initNative } from '../lib/native.ts';
import { runDaemon, serveDaemon } from '../daemon/serve.ts';
import { RemotePublisher } from '../daemon/remote-publisher.ts';
import { Udevd } from './udevd.ts';

export async function main(): Promise<void> {
  const log = new StderrLogger('udevd');
  await initNative();
  const onNode = process.ppid === 1;
  const devRoot = process.env.BRONZE_DEV_ROOT ?? (onNode ? '/dev' : path.join(runDir(), 'udevd', 'dev'));
  const trigger = process.env.BRONZE_UDEVD_TRIGGER !== undefined ? process.env.BRONZE_UDEVD_TRIGGER === '1' : onNode;
  await runDaemon('udevd', log, async () => {
    const server = await serveDaemon('udevd', log);
    server.setStatus('NOT_SERVING');
    const publisher = new RemotePublisher('udevd');
    const udevd = await Udevd.start({ publisher, log, devRoot, sysRoot: process.env.BRONZE_SYS_ROOT ?? '/sys', trigger });
    server.setStatus('SERVING');
    log.info(`links under ${devRoot}${trigger ? '' : ' (coldplug without trigger)'}`);
    return {
      ...server,
      close: async () => {
        await udevd.stop();
        publisher.close();
        await server.close();
      },
    };
  });
}
