// What runs in machined's resource state, in one place: the controllers (registered in this order
// before the API starts) and the publishers of what machined reads of the system once, when the
// API starts. `nodeOnly` ones change or read the kernel's and the disk's state: only as PID 1 on
// a node, never in a host run.
import fs from 'node:fs';
import type { Controller } from '../state/controller.ts';
import type { State } from '../state/state.ts';
import type { Logger } from '../lib/log.ts';
import type { StatePublisher } from '../daemon/publisher.ts';
import type { DefinitionRegistry } from '../contract/resources/registry.ts';
import type { Supervisor } from './supervisor/supervisor.ts';
import type { Cmdline } from './cmdline.ts';
import { fstrim, MS, mount as sysMount } from '../lib/sys.ts';
import { readIdentity } from '../lib/hostname.ts';
import { identityFile } from '../contract/paths.ts';
import { NAMESPACES } from '../contract/resources/namespace.ts';
import { SECURITY_STATE_ID, SECURITY_STATE_TYPE } from '../contract/resources/security-state.ts';
import { ROOTFS_STATUS_ID, ROOTFS_STATUS_TYPE } from '../contract/resources/rootfs-status.ts';
import { baseServiceEnv, daemonEnv } from './services.ts';
import { serviceController } from './controllers/services.ts';
import { kernelParamController, procSys } from './controllers/sysctls.ts';
import { DEFAULT_SYSCTLS } from './controllers/sysctl-defaults.ts';
import { filesController } from './controllers/files.ts';
import { ephemeralMountController } from './controllers/ephemeral-mount.ts';
import { fstrimController } from './controllers/fstrim.ts';
import { envController } from './controllers/env.ts';
import { containerController } from './workloads/controller.ts';
import type { NodeWorkloads } from './workloads/node-workloads.ts';
import { publishDefinitions, publishNamespaces } from './meta.ts';
import { readSecurityState } from './security-state.ts';
import { readRootfsStatus, systemProbe } from './rootfs-status.ts';

export interface ControllerDeps {
  supervisor: Supervisor;
  /** The environment every service gets (SERVICE_ENV and the like). */
  serviceEnv: Record<string, string>;
  /** The node's mounted volumes (label, mount point), for fstrim. */
  volumes: () => Array<{ label: string; mountpoint: string }>;
  /** The node's containers (containerd, once it is up). */
  workloads: NodeWorkloads;
  log: Logger;
}

export interface Registration<T> {
  name: string;
  nodeOnly?: true;
  make: (d: T) => Controller;
}

export const CONTROLLERS: ReadonlyArray<Registration<ControllerDeps>> = [
  { name: 'services', make: (d) => serviceController(d.supervisor) },
  // ContainerConfig documents, run by containerd (a host run without containerd publishes their specs).
  {
    name: 'containers',
    make: (d) =>
      containerController({
        port: () => d.workloads.port(),
        log: d.log,
        onEngine: (e) => d.workloads.engine(e),
        onSettled: (ok) => d.workloads.settled(ok),
        onConfig: (n, r) => d.workloads.config(n, r),
      }),
  },
  { name: 'env', make: (d) => envController(d.supervisor, baseServiceEnv(d.serviceEnv), daemonEnv) },
  { name: 'sysctls', nodeOnly: true, make: () => kernelParamController(procSys(), DEFAULT_SYSCTLS) },
  { name: 'files', nodeOnly: true, make: () => filesController() },
  // VolumeConfig (EPHEMERAL's mount options) and FilesystemTrimConfig: the volumes of the node's disk.
  {
    name: 'ephemeral mount',
    nodeOnly: true,
    make: () => ephemeralMountController((target, noatime) => sysMount(null, target, null, MS.REMOUNT | MS.NOSUID | MS.NODEV | (noatime ? MS.NOATIME : MS.RELATIME))),
  },
  {
    name: 'fstrim',
    nodeOnly: true,
    make: (d) =>
      fstrimController({
        volumes: d.volumes,
        trim: (mountpoint, range) => fstrim(mountpoint, range),
        size: (mountpoint) => {
          const st = fs.statfsSync(mountpoint);
          return st.blocks * st.bsize;
        },
        nodeSeed: () => readIdentity(identityFile())?.value ?? 'bronze',
      }),
  },
];

/** The controllers this process runs: all of them as PID 1, the others in a host run. */
export function machinedControllers(d: ControllerDeps, pid1: boolean): Controller[] {
  return CONTROLLERS.filter((c) => pid1 || !c.nodeOnly).map((c) => c.make(d));
}

export interface PublisherDeps {
  state: State;
  registry: DefinitionRegistry;
  /** machined's publisher of what it reads of the system. */
  facts: StatePublisher;
  cmdline: () => Cmdline;
  log: Logger;
}

export const PUBLISHERS: ReadonlyArray<{ name: string; nodeOnly?: true; publish: (d: PublisherDeps) => Promise<void> }> = [
  { name: 'namespaces', publish: (d) => publishNamespaces(d.state, NAMESPACES) },
  { name: 'resource definitions', publish: (d) => publishDefinitions(d.state, d.registry) },
  { name: 'security state', nodeOnly: true, publish: (d) => d.facts.apply('runtime', SECURITY_STATE_TYPE, SECURITY_STATE_ID, readSecurityState()) },
  {
    name: 'rootfs status',
    nodeOnly: true,
    publish: async (d) => {
      const rootfs = readRootfsStatus(systemProbe(d.cmdline));
      if (rootfs.verified) d.log.info(`rootfs: ${rootfs.device} (${rootfs.filesystemType}) verified by dm-verity (${rootfs.mapperName}, ${rootfs.hashAlgorithm}, root hash ${rootfs.rootHash})`);
      else d.log.warn(`rootfs: ${rootfs.device || '/'} is not verified: ${rootfs.reason}`);
      await d.facts.apply('runtime', ROOTFS_STATUS_TYPE, ROOTFS_STATUS_ID, rootfs);
    },
  },
];

/** Publishes, in order, what the API serves from its first call: all as PID 1, the others in a host run. */
export async function publishSystemFacts(d: PublisherDeps, pid1: boolean): Promise<void> {
  for (const p of PUBLISHERS) if (pid1 || !p.nodeOnly) await p.publish(d);
}
