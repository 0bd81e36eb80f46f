// networkd: links, addresses, routes, DHCPv4, hostname and resolvers over rtnetlink. It serves
// health and Version on its unix socket (/system/run/networkd/networkd.sock) and runs the
// NetworkManager (manager.ts).
//
// It changes the network only on a node (its parent is machined as PID 1) or when
// BRONZE_NETWORKD_MANAGE=1: a host run (machined as an ordinary process, in tests) must not
// run DHCP on the host's links, so there networkd only observes and publishes.
//
// Inputs: the kernel command line and the machine configuration (watched in machined's state,
// applied live), or in host runs a JSON NetworkConfig file named by BRONZE_NETWORKD_CONFIG
// (resolv.conf and hosts then go to BRONZE_NETWORKD_ETC_DIR). Resources go to machined's state
// over its socket (RemotePublisher) when BRONZE_NETWORKD_PUBLISH=remote or on a node; elsewhere
// into a local in-memory state.
import fs from 'node:fs';
import path from 'node:path';
import { StderrLogger } from '../lib/log.ts';
import { initNative } from '../lib/native.ts';
import { sethostname } from '../lib/sys.ts';
import { runDaemon, serveDaemon } from '../daemon/serve.ts';
import { type Publisher, StatePublisher } from '../daemon/publisher.ts';
import { RemotePublisher } from '../daemon/remote-publisher.ts';
import { MemoryState } from '../state/memory.ts';
import { readIdentity, stableHostname } from '../lib/hostname.ts';
import { identityFile } from '../contract/paths.ts';
import { HOSTNAME_STATUS_TYPE } from '../contract/resources/hostname-status.ts';
import { mayWrite } from '../contract/resources/registry.ts';
import { readLinkSysInfo } from './linkinfo.ts';
import type { NetworkConfig } from './config.ts';
import { NetworkManager } from './manager.ts';
import { watchMachineConfig } from '../daemon/config-watch.ts';
import { networkConfigOf } from './config-map.ts';

/**
 * The kernel command line. preinit mounts /proc before /sbin/init runs; should it not be there
 * (a boot path without preinit), networkd waits for machined to mount it rather than lose
 * bronze.hostname= and ip= (30 s at most, then none, said in the log).
 */
async function kernelCmdline(onNode: boolean, log: StderrLogger): Promise<string> {
  for (let waited = 0; ; waited += 100) {
    try {
      return fs.readFileSync('/proc/cmdline', 'utf8');
    } catch {
      if (!onNode) return '';
      if (waited >= 30_000) {
        log.warn('no /proc/cmdline after 30 s: going on without the kernel arguments');
        return '';
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function readConfig(log: StderrLogger): NetworkConfig | undefined {
  const file = process.env.BRONZE_NETWORKD_CONFIG;
  if (!file) return undefined;
  try {
    // A test and host-run hook: the file holds networkd's own form, as machined's validated
    // configuration maps to (config-map.ts); the one validator is the machine config schema's.
    return JSON.parse(fs.readFileSync(file, 'utf8')) as NetworkConfig;
  } catch (err) {
    log.error(`network configuration ${file}: ${(err as Error).message}; using none`);
    return undefined;
  }
}

function etcPaths(): { resolvConfPath: string; hostsPath: string; hostnamePath: string } {
  const dir = process.env.BRONZE_NETWORKD_ETC_DIR ?? '/system/etc';
  return { resolvConfPath: path.join(dir, 'resolv.conf'), hostsPath: path.join(dir, 'hosts'), hostnamePath: path.join(dir, 'hostname') };
}

export async function main(): Promise<void> {
  const log = new StderrLogger('networkd');
  const onNode = process.ppid === 1;
  const manage = onNode || process.env.BRONZE_NETWORKD_MANAGE === '1';
  const remote = onNode || process.env.BRONZE_NETWORKD_PUBLISH === 'remote';
  await runDaemon('networkd', log, async () => {
    const d = await serveDaemon('networkd', log);
    let manager: NetworkManager | undefined;
    const watchAbort = new AbortController();
    const publisher: Publisher & { close?(): void } = remote ? new RemotePublisher('networkd') : new StatePublisher(new MemoryState(), 'networkd');
    try {
      await initNative();
      const cmdline = await kernelCmdline(onNode, log);
      manager = new NetworkManager({
        publisher,
        log,
        ...(onNode ? { cmdline } : {}),
        config: readConfig(log) ?? {},
        manage,
        ...(manage ? etcPaths() : { resolvConfPath: null, hostsPath: null, hostnamePath: null }),
        // Whoever owns HostnameStatuses sets the kernel's hostname too (machined may own it).
        publishHostname: !remote || mayWrite('networkd', HOSTNAME_STATUS_TYPE),
        ...(onNode && mayWrite('networkd', HOSTNAME_STATUS_TYPE) ? { setHostname: sethostname } : {}),
        ...(remote ? { mayPublish: (type: string) => mayWrite('networkd', type) } : {}),
        // The identity machined chose at boot (physical links only, else its machine id).
        defaultHostname: () => stableHostname(readIdentity(identityFile())?.value),
        // /sys shows the links of this network namespace only on a node.
        ...(onNode ? { linkInfo: (name: string) => readLinkSysInfo(name) } : {}),
      });
      // On a node (or when publishing to machined), the machine configuration drives it live,
      // from before the first publication (a configuration that arrives while start() still
      // publishes is kept and applied by its reconcile, not after it).
      if (remote && !process.env.BRONZE_NETWORKD_CONFIG) {
        const m = manager;
        void watchMachineConfig(publisher, networkConfigOf, (cfg) => {
          // Validated by machined (the machine config schema) before it was published.
          m.setConfig(cfg);
          log.info('network configuration updated');
        }, log, watchAbort.signal);
      }
      const started = performance.now();
      await manager.start();
      log.info(`networkd ${manage ? 'managing' : 'observing'} the network (links read, reconciled and published in ${Math.round(performance.now() - started)} ms)`);
    } catch (err) {
      // Health stays SERVING: the daemon is up; what failed is logged and shown in the network resources.
      log.error(`network manager: ${(err as Error).message}`);
    }
    return {
      ...d,
      close: async () => {
        watchAbort.abort();
        await manager?.stop({ release: true }).catch((err) => log.error(`stopping: ${(err as Error).message}`));
        publisher.close?.();
        await d.close();
      },
    };
  });
}
