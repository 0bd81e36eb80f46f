// machined's tasks, as Talos's sequencer has them: each a named function taking only what it
// needs, and `bootTasks` the table that gives each task name (sequences.ts: TASKS) its function
// on a node's parts. The sequences (boot, shutdown, reboot) list the names in their order.
import fs from 'node:fs';
import type { KmsgLogger, Logger } from '../lib/log.ts';
import { REBOOT, reboot, sethostname, sync } from '../lib/sys.ts';
import { describeIdentity, machineIdentity, stableHostname, writeIdentityFile } from '../lib/hostname.ts';
import type { StatePublisher } from '../daemon/publisher.ts';
import type { ControllerRuntime } from '../state/controller.ts';
import { identityFile } from '../contract/paths.ts';
import { MOUNT_STATUS_TYPE } from '../contract/resources/mount-status.ts';
import type { Cmdline } from './cmdline.ts';
import { currentMounts, mountEarly, setupSystemEtc, unmountAll } from './mounts.ts';
import { mountStatuses } from './mount-status.ts';
import { checkMemory, readMeminfo } from './memory-check.ts';
import { cgroupFs, killCgroups, setupCgroups } from './cgroups.ts';
import { mountNodeVolumes, type MountedVolumes } from './volumes.ts';
import { closeVolumes, ephemeralEncryptionOnState, stateEncryptionAtBoot, syncStateEncryption } from './encryption.ts';
import { wipeRecordedVolumes, type NodeLifecycle } from './lifecycle/lifecycle.ts';
import type { MachineStatusReporter } from './machine-status.ts';
import type { NodeConfig } from './node-config.ts';
import type { ClusterParts } from './cluster/cluster.ts';
import type { Supervisor } from './supervisor/supervisor.ts';
import type { NodeWorkloads } from './workloads/node-workloads.ts';
import { startMachinedApi, type MachinedApiDeps } from './api/server.ts';
import { warmApi } from './api/warm.ts';
import { quorumGuardedLifecycle } from './cluster/guard.ts';
import { leaveCluster } from './api/etcd.ts';
import { watchPowerButton } from './powerbutton.ts';
import { publishSystemFacts, type PublisherDeps } from './registrations.ts';
import type { MachinedNode, Tasks } from './node.ts';

/**
 * /proc, /sys, /dev and the runtime tmpfs; the cgroup layout, with machined in /init (Talos's
 * CreateSystemCgroups); then, below the minimum of memory, say so once, clearly, and keep going
 * (slowly).
 */
export function mountEarlyFilesystems(log: KmsgLogger, status: MachineStatusReporter): void {
  mountEarly(log);
  log.reopen();
  setupCgroups({ fs: cgroupFs(), log, selfPid: process.pid });
  const mem = checkMemory(readMeminfo());
  if (!mem.ok) {
    log.error(`memory: ${mem.message}`);
    void status.report('memory', [mem.message!]);
  } else if (mem.totalKiB !== undefined) {
    log.info(`memory: ${Math.round(mem.totalKiB / 1024)} MiB (MemTotal)`);
  }
}

/** The node's disk volumes (STATE, EPHEMERAL), published as MountStatuses. */
export async function mountVolumes(log: Logger, facts: StatePublisher): Promise<MountedVolumes> {
  // A wipe recorded in META that the last reboot did not get to is done before mounting.
  const volumes = await mountNodeVolumes(log, {
    beforeMount: async (disk) => void (await wipeRecordedVolumes(disk, log)),
    // STATE's encryption settings are recorded in META; EPHEMERAL's are in the configuration on STATE.
    encryption: (label, disk) => (label === 'STATE' ? stateEncryptionAtBoot(disk.partitions.META?.device, disk.partitions.STATE?.device) : ephemeralEncryptionOnState()),
  });
  for (const [id, spec] of mountStatuses(volumes, currentMounts())) await facts.apply('runtime', MOUNT_STATUS_TYPE, id, spec);
  return volumes;
}

/**
 * The machine's identity, once, before the daemons start (src/lib/hostname.ts): networkd reads
 * it from the run directory for its default hostname. Then the hostname from it.
 */
export function setHostname(o: { log: Logger; cmdline: () => Cmdline; stateDir: string; stateOnDisk: () => boolean; pid1: boolean }): void {
  const id = machineIdentity({ stateDir: o.stateDir });
  writeIdentityFile(id, identityFile());
  if (id?.source === 'machine-id' && !o.stateOnDisk()) o.log.warn('identity: no SMBIOS UUID and no physical link; the machine id lives in memory-backed STATE and changes at every boot');
  const given = o.cmdline().get('bronze.hostname');
  const name = given || stableHostname(id?.value);
  sethostname(name);
  if (o.pid1) fs.writeFileSync('/system/etc/hostname', `${name}\n`, { mode: 0o644 });
  o.log.info(`hostname set to ${name} (${given ? 'kernel argument bronze.hostname' : `derived from ${describeIdentity(id)}`})`);
}

/** The machine configuration: a host run (not PID 1) may name a file; a node reads STATE, then kernel arguments. */
export async function loadConfig(o: {
  log: Logger;
  pid1: boolean;
  cmdline: () => Cmdline;
  nodeConfig: Pick<NodeConfig, 'boot'>;
  lifecycle: Pick<NodeLifecycle, 'boot'>;
  volumes: MountedVolumes | undefined;
  configText: () => string | undefined;
}): Promise<void> {
  await o.nodeConfig.boot(o.cmdline(), !o.pid1 ? process.env.BRONZE_CONFIG_FILE : undefined);
  const stateVolume = o.volumes?.statuses.STATE;
  if (o.pid1 && stateVolume?.phase === 'ready') {
    const partitions = o.volumes?.disk?.partitions;
    syncStateEncryption(o.log, { metaDevice: partitions?.META?.device, device: partitions?.STATE?.device, encrypted: stateVolume.encryptionProvider === 'luks2' }, o.configText());
  }
  await o.lifecycle.boot();
}

/** The resources the API serves from its first call, the controllers, and machined's API. */
export async function startApi(
  o: PublisherDeps & { log: KmsgLogger; pid1: boolean; controllers: Pick<ControllerRuntime, 'start' | 'dependencies'>; cluster: ClusterParts; lifecycle: NodeLifecycle },
  api: Pick<MachinedApiDeps, 'supervisor' | 'events' | 'requestSequence' | 'generateClientConfiguration' | 'applyConfiguration' | 'metaDevice' | 'workloads'>,
): Promise<{ close(): Promise<void> }> {
  const { state, registry, log, cluster } = o;
  await publishSystemFacts(o, o.pid1);
  o.controllers.start();
  const server = await startMachinedApi({
    ...api,
    log,
    state,
    registry,
    lifecycle: quorumGuardedLifecycle(o.lifecycle, {
      quorumCheck: cluster.quorumCheck,
      isMember: cluster.isMember,
      leave: () => leaveCluster(cluster.api, { check: false, operation: 'reset' }),
      log: (m) => log.info(m),
    }),
    etcd: cluster.api,
    clusterRegistry: cluster.registryService,
    controllers: () => o.controllers.dependencies(),
    powerCheck: cluster.powerCheck,
    onError: (m) => log.warn(m),
  });
  // What the first API calls need, made now rather than while the first caller waits (api/warm.ts).
  setImmediate(() => void warmApi({ state, registry }).catch((err: Error) => log.warn(`warming the API: ${err.message}`)));
  return server;
}

/** The daemons, and the cluster registry; a configuration from the kernel arguments may name an install disk. */
export function startServices(o: {
  pid1: boolean;
  supervisor: Pick<Supervisor, 'start'>;
  /** Called once the supervisor has started the daemons. */
  started: () => void;
  cluster: ClusterParts;
  lifecycle: Pick<NodeLifecycle, 'maybeInstall'>;
  configText: () => string | undefined;
}): void {
  o.supervisor.start();
  o.started();
  o.cluster.registry.start();
  const configText = o.configText();
  if (o.pid1 && configText !== undefined) void o.lifecycle.maybeInstall(configText);
}

/** Everything machined started, in reverse: an install or upgrade writing to the disk finishes first; no new one starts. */
export async function stopServices(o: {
  log: Logger;
  lifecycle: Pick<NodeLifecycle, 'quiesce'>;
  nodeConfig: Pick<NodeConfig, 'stop'>;
  cluster: ClusterParts;
  supervisor: Pick<Supervisor, 'stop'>;
  machinedApi: { close(): Promise<void> } | undefined;
  controllers: Pick<ControllerRuntime, 'stop'>;
  /**
   * The operator's containers, stopped before containerd (each with its stop signal and grace
   * period): once containerd is gone, the shims keep them running and only a kill is left.
   */
  workloads?: Pick<NodeWorkloads, 'stopAll'>;
  /** As PID 1: what is left in the containers' and services' cgroups (shims, containers) is killed. */
  killLeftovers?: () => Promise<void>;
}): Promise<void> {
  await o.lifecycle.quiesce();
  o.nodeConfig.stop();
  o.cluster.registry.stop();
  o.cluster.etcd.stop();
  await o.workloads?.stopAll();
  o.log.info('stopping services in reverse dependency order');
  await o.supervisor.stop();
  await o.killLeftovers?.();
  o.log.info('all services stopped');
  await o.machinedApi?.close();
  await o.controllers.stop();
}

export function unmountFilesystems(log: Logger, pid1: boolean): void {
  unmountAll(log);
  if (pid1) closeVolumes(log);
}

export function powerOff(log: Logger): void {
  log.info('powering off');
  reboot(REBOOT.POWER_OFF);
}

export function restart(log: Logger): void {
  log.info('rebooting');
  reboot(REBOOT.RESTART);
}

/** Each task name's function, on this node's parts. */
export function bootTasks(node: MachinedNode): Tasks {
  const { log, pid1, cmdline } = node;
  const request = node.request.bind(node);
  return {
    mountEarly: () => mountEarlyFilesystems(log, node.machineStatus),
    systemEtc: () => setupSystemEtc(log),
    mountVolumes: async () => void (node.volumes = await mountVolumes(log, node.systemFacts)),
    hostname: () => setHostname({ log, cmdline, pid1, stateDir: node.stateDir, stateOnDisk: () => !!node.volumes?.mounted.some((m) => m.label === 'STATE') }),
    // With ctrl-alt-del "off", the kernel sends SIGINT to PID 1 instead of rebooting at once.
    ctrlAltDelSignal: () => reboot(REBOOT.CAD_OFF),
    loadConfig: () => loadConfig({ log, pid1, cmdline, nodeConfig: node.nodeConfig, lifecycle: node.lifecycle, volumes: node.volumes, configText: () => node.configText }),
    startReaper: () => node.reaper.start(),
    startApi: async () => {
      const { state, registry, systemFacts: facts, controllers, cluster, lifecycle, nodeConfig } = node;
      node.machinedApi = await startApi(
        { state, registry, facts, cmdline, log, pid1, controllers, cluster, lifecycle },
        {
          supervisor: node.supervisor,
          events: node.events,
          requestSequence: (seq, reason, actorId) => request(seq, reason, actorId),
          generateClientConfiguration: (req) => nodeConfig.generateClientConfiguration(req),
          applyConfiguration: (req) => nodeConfig.applyConfiguration(req),
          metaDevice: () => node.metaDevice(),
          workloads: () => node.workloads.api(),
        },
      );
    },
    startServices: () =>
      startServices({ pid1, supervisor: node.supervisor, started: () => void (node.servicesStarted = true), cluster: node.cluster, lifecycle: node.lifecycle, configText: () => node.configText }),
    watchPowerButton: () => watchPowerButton(log, () => void request('shutdown', 'power button')),
    stopServices: () =>
      stopServices({
        log,
        lifecycle: node.lifecycle,
        nodeConfig: node.nodeConfig,
        cluster: node.cluster,
        supervisor: node.supervisor,
        machinedApi: node.machinedApi,
        controllers: node.controllers,
        workloads: node.workloads,
        ...(pid1 ? { killLeftovers: () => killCgroups({ fs: cgroupFs(), log }) } : {}),
      }),
    sync: () => sync(),
    unmountAll: () => unmountFilesystems(log, pid1),
    wipeVolumes: () => node.lifecycle.wipePending(),
    powerOff: () => powerOff(log),
    restart: () => restart(log),
  };
}
