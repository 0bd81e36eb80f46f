// machined: PID 1. Mounts the runtime filesystems, sets the hostname, supervises the daemons,
// reaps orphans, and turns SIGTERM, SIGINT (ctrl-alt-del) and the ACPI power button into an
// orderly shutdown. Outside PID 1 (a host run) it only supervises, which tests use.
import fs from 'node:fs';
import { KmsgLogger } from '../lib/log.ts';
import { fstrim, MS, mount as sysMount, REBOOT, reboot, sethostname, sync } from '../lib/sys.ts';
import { VERSION } from '../version.ts';
import { startupTimes } from '../lib/startup.ts';
import type { RoleHandoff } from '../role-entry.ts';
import { readCmdline } from './cmdline.ts';
import { describeIdentity, machineIdentity, readIdentity, stableHostname, writeIdentityFile } from '../lib/hostname.ts';
import { currentMounts, mountEarly, setupSystemEtc, unmountAll } from './mounts.ts';
import { mountStatuses } from './mount-status.ts';
import { readSecurityState } from './security-state.ts';
import { readRootfsStatus, systemProbe } from './rootfs-status.ts';
import { StatePublisher } from '../daemon/publisher.ts';
import { MOUNT_STATUS_TYPE } from '../contract/resources/mount-status.ts';
import { SECURITY_STATE_ID, SECURITY_STATE_TYPE } from '../contract/resources/security-state.ts';
import { ROOTFS_STATUS_ID, ROOTFS_STATUS_TYPE } from '../contract/resources/rootfs-status.ts';
import { watchPowerButton } from './powerbutton.ts';
import { cpuReport, mappingReport, memoryReport } from './memstats.ts';
import { Reaper, spawnedChildren } from './reaper.ts';
import { runSequence, type SequenceName, type TaskName } from './sequences.ts';
import { SERVICE_ENV, baseServiceEnv, daemonEnv, serviceSpecs } from './services.ts';
import { Supervisor } from './supervisor/supervisor.ts';
import { startMachinedApi } from './api/server.ts';
import { warmApi } from './api/warm.ts';
import { EventBus, mirrorServiceEvents } from './api/events.ts';
import { serviceController } from './controllers/services.ts';
import { kernelParamController, procSys } from './controllers/sysctls.ts';
import { filesController } from './controllers/files.ts';
import { ephemeralMountController } from './controllers/ephemeral-mount.ts';
import { fstrimController } from './controllers/fstrim.ts';
import { envController } from './controllers/env.ts';
import { MemoryState } from '../state/memory.ts';
import { ControllerRuntime } from '../state/controller.ts';
import { DefinitionRegistry } from '../contract/resources/registry.ts';
import { NAMESPACES } from '../contract/resources/namespace.ts';
import { publishDefinitions, publishNamespaces } from './meta.ts';
import { NodeConfig } from './node-config.ts';
import { metaRecordStore } from './recovery.ts';
import { mountNodeVolumes, type MountedVolumes } from './volumes.ts';
import { closeVolumes, ephemeralEncryptionOnState, stateEncryptionAtBoot, syncStateEncryption } from './encryption.ts';
import { NodeLifecycle, wipeRecordedVolumes } from './lifecycle/lifecycle.ts';
import { MachineStatusReporter } from './machine-status.ts';
import { checkMemory, readMeminfo } from './memory-check.ts';
import { validateMachineConfig } from './config/validation.ts';
import { apidListenAddress, secretsDir } from '../contract/paths.ts';
import { splitHostPort } from '../lib/hostport.ts';
import { clusterParts } from './cluster/cluster.ts';
import { memberIdReader } from './cluster/member-id.ts';
import { quorumGuardedLifecycle } from './cluster/guard.ts';
import { leaveCluster } from './api/etcd.ts';
import { optimizeFrom } from '../lib/role-source.ts';

function uptime(): string {
  try {
    return `${fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]} s since kernel start`;
  } catch {
    return `${process.uptime().toFixed(2)} s since machined start`;
  }
}

export async function main(handoff: RoleHandoff = {}): Promise<void> {
  const pid1 = process.pid === 1;
  const log = new KmsgLogger('machined', pid1);
  log.info(`machined ${VERSION.tag} (${VERSION.sha}) starting as PID ${process.pid} on Node ${process.version} (${startupTimes()})`);

  // A host run may supervise a subset: BRONZE_SERVICES=apid,timed.
  const only = !pid1 && process.env.BRONZE_SERVICES ? process.env.BRONZE_SERVICES.split(',').filter(Boolean) : undefined;
  const serviceEnv: Record<string, string> = { ...SERVICE_ENV };
  // Resources and events: the state the API exposes, fed by controllers.
  const state = new MemoryState();
  let configText: string | undefined;
  // etcd (control planes), the quorum checks and the cluster registry (Members).
  const cluster = clusterParts({
    log,
    state,
    configText: () => configText,
    secretsDir: secretsDir(),
    nodeId: memberIdReader(process.env.BRONZE_STATE_DIR ?? '/system/state', log),
    osVersion: VERSION.tag,
    etcdState: () => supervisor.get('etcd')?.state,
    stopEtcd: () => supervisor.stopService('etcd'),
    listenHost: splitHostPort(apidListenAddress()).host,
  });
  const daemons = serviceSpecs(serviceEnv, only?.filter((id) => id !== 'etcd'));
  const withEtcd = !only || only.includes('etcd');
  const etcdSpec = { ...cluster.etcdSpec(serviceEnv), dependsOn: ['apid', 'networkd'].filter((d) => daemons.some((s) => s.id === d)) };
  const supervisor = new Supervisor([...daemons, ...(withEtcd ? [etcdSpec] : [])], { log: (m) => log.info(m), adopt: handoff.firstServices });
  if (handoff.firstServices?.size) log.info(`started first, before machined loaded: ${[...handoff.firstServices.keys()].join(', ')}`);
  // Never the children libuv waits for: the daemons, and whatever machined's own work spawns.
  const children = spawnedChildren();
  const reaper = new Reaper(() => new Set([...supervisor.pids(), ...children()]), log);

  const registry = new DefinitionRegistry();
  // What machined reads of the system once: the mounted volumes and the security state.
  const systemFacts = new StatePublisher(state, 'machined');
  const machineStatus = new MachineStatusReporter(state, log);
  const controllers = new ControllerRuntime(state, { log });
  controllers.register(serviceController(supervisor));
  controllers.register(envController(supervisor, baseServiceEnv(serviceEnv), daemonEnv));
  if (pid1) {
    // They change the kernel's state: only on a node, never in a host run.
    controllers.register(kernelParamController(procSys()));
    controllers.register(filesController());
  }
  const events = new EventBus();
  mirrorServiceEvents(supervisor, events);
  const cmdline = () => readCmdline();

  let allRunningLogged = false;
  supervisor.on('event', (id: string, ev: { state: string; message: string }) => {
    log.info(`service ${id}: ${ev.state}${ev.message ? `: ${ev.message}` : ''}`);
    // Up: Running and healthy. Not in the way: a Skipped service (etcd on a worker) and etcd
    // waiting for bootstrap or for a cluster to join (the node itself is up; Talos likewise).
    const list = supervisor.list();
    const aside = list.filter((s) => s.state === 'Skipped' || (s.id === 'etcd' && s.state === 'Preparing' && cluster.etcd.waiting));
    const up = list.filter((s) => !aside.includes(s));
    const allUp = up.every((s) => s.state === 'Running' && s.healthy);
    if (allUp && !allRunningLogged) {
      allRunningLogged = true;
      const etcdNote = aside.some((s) => s.id === 'etcd' && s.state === 'Preparing') ? '; etcd waits for bootstrap or a cluster to join' : '';
      log.info(`all ${up.length} services Running (${uptime()}${etcdNote})`);
      optimizeFrom('machined', 'running');
      debugKill();
      debugMemstats();
      void lifecycle.running();
    }
    if (!allUp && allRunningLogged && up.some((s) => s.state !== 'Running')) allRunningLogged = false;
  });

  // Test aid, only with the kernel argument `bronze.debug.kill=<service>`: once every service
  // is up, SIGKILL that service's process once, so an end-to-end test can watch the restart.
  let debugKilled = false;
  const debugKill = () => {
    const target = cmdline().get('bronze.debug.kill');
    if (!target || debugKilled) return;
    const pid = supervisor.get(target)?.pid;
    if (!pid) return log.warn(`debug: bronze.debug.kill=${target}: no such running service`);
    debugKilled = true;
    log.info(`debug: sending SIGKILL to ${target} (pid ${pid})`);
    process.kill(pid, 'SIGKILL');
  };

  // Measurement aid, only with `bronze.debug.memstats=<seconds>`: log the CPU time every
  // process has used once all are up, and after that long at idle the PSS of machined and
  // every daemon (the benchmark reads both from the console).
  let memstatsScheduled = false;
  const debugMemstats = () => {
    const secs = Number(cmdline().get('bronze.debug.memstats'));
    if (!secs || memstatsScheduled) return;
    memstatsScheduled = true;
    const procs = () => [{ name: 'machined', pid: process.pid }, ...supervisor.list().map((s) => ({ name: s.id, pid: s.pid }))];
    // Where the boot's CPU went: each process's CPU time when all came up. PID 1's counts
    // the kernel's own start-up and preinit as well, which ran as PID 1 before machined.
    log.info(`cpustats: at Running ${cpuReport(procs())}`);
    setTimeout(() => {
      log.info(`memstats: pss ${memoryReport(procs())}`);
      // Where each process's PSS is, by mapping (MiB): what a change to lower it would aim at.
      for (const p of procs()) if (p.pid !== undefined) log.info(`memstats: ${p.name} ${mappingReport(p.pid)}`);
    }, secs * 1000);
  };

  let machinedApi: { close(): Promise<void> } | undefined;
  let volumes: MountedVolumes | undefined;
  const lifecycle = new NodeLifecycle({
    log,
    state,
    cmdline,
    volumes: () => volumes,
    configText: () => configText,
    requestSequence: (seq, reason, actorId) => request(seq, reason, actorId),
    status: machineStatus,
    // A tried slot that could not use the configuration is not committed (recovery.ts).
    holdCommit: (): string | undefined => (nodeConfig.locked ? `the configuration could not be used at boot (${nodeConfig.locked[0]})` : undefined),
  });
  // Only a node installs: a host run must never write to the host's disks.
  const activated = (text: string) => {
    configText = text;
    // A tried slot held back because the configuration could not be used: commit it now.
    if (allRunningLogged) void lifecycle.running();
    if (pid1 && servicesStarted) void lifecycle.maybeInstall(text);
    // A configuration applied later may make this node a control plane: etcd's condition again.
    if (servicesStarted && withEtcd && supervisor.get('etcd')?.state === 'Skipped') void supervisor.startService('etcd');
    cluster.registry.poke();
  };
  let servicesStarted = false;
  const listenHost = splitHostPort(apidListenAddress()).host;
  const nodeConfig = new NodeConfig({
    state,
    log,
    secretsDir: secretsDir(),
    stateDir: process.env.BRONZE_STATE_DIR ?? '/system/state',
    validate: validateMachineConfig,
    reboot: (reason) => void request('reboot', reason),
    extraAddresses: () => (listenHost === '::' || listenHost === '0.0.0.0' ? [] : [listenHost]),
    certTtlMs: Number(process.env.BRONZE_API_CERT_TTL_MS ?? 24 * 3600 * 1000),
    certCheckMs: Number(process.env.BRONZE_API_CERT_CHECK_MS ?? 30_000),
    trustdPort: Number(process.env.BRONZE_TRUSTD_PORT ?? 50001),
    onActivated: (text) => activated(text),
    // STATE on a disk survives a reboot; memory-backed (ISO, PXE, bare kernel) it does not.
    statePersistent: () => !pid1 || !!volumes?.mounted.some((m) => m.label === 'STATE'),
    status: machineStatus,
    stateVolume: () => volumes?.statuses.STATE,
    // Only a node installs (see activated).
    installNotice: pid1 ? (text) => lifecycle.installNotice(text) : undefined,
    // META: the configuration record and recovery identity (a host run may name a file for it).
    meta: () => {
      const dev = pid1 ? volumes?.disk?.partitions.META?.device : process.env.BRONZE_META_FILE;
      return dev ? metaRecordStore(dev) : undefined;
    },
    event: (type, error) => void events.publish(type, { error }),
  });
  if (pid1) {
    // VolumeConfig (EPHEMERAL's mount options) and FilesystemTrimConfig: the volumes of the node's disk.
    controllers.register(ephemeralMountController((target, noatime) => sysMount(null, target, null, MS.REMOUNT | MS.NOSUID | MS.NODEV | (noatime ? MS.NOATIME : MS.RELATIME))));
    controllers.register(
      fstrimController({
        volumes: () => (volumes?.mounted ?? []).map((m) => ({ label: m.label, mountpoint: m.target })),
        trim: (mountpoint, range) => fstrim(mountpoint, range),
        size: (mountpoint) => {
          const st = fs.statfsSync(mountpoint);
          return st.blocks * st.bsize;
        },
        nodeSeed: () => readIdentity()?.value ?? 'bronze',
      }),
    );
  }

  const tasks: Record<TaskName, () => void | Promise<void>> = {
    mountEarly: () => {
      mountEarly(log);
      log.reopen();
      // Below the minimum, say so once, clearly, and keep going (slowly).
      const mem = checkMemory(readMeminfo());
      if (!mem.ok) {
        log.error(`memory: ${mem.message}`);
        void machineStatus.report('memory', [mem.message!]);
      } else if (mem.totalKiB !== undefined) {
        log.info(`memory: ${Math.round(mem.totalKiB / 1024)} MiB (MemTotal)`);
      }
    },
    systemEtc: () => setupSystemEtc(log),
    mountVolumes: async () => {
      // A wipe recorded in META that the last reboot did not get to is done before mounting.
      volumes = await mountNodeVolumes(log, {
        beforeMount: async (disk) => void (await wipeRecordedVolumes(disk, log)),
        // STATE's encryption settings are recorded in META; EPHEMERAL's are in the configuration on STATE.
        encryption: (label, disk) =>
          label === 'STATE' ? stateEncryptionAtBoot(disk.partitions.META?.device, disk.partitions.STATE?.device) : ephemeralEncryptionOnState(),
      });
      for (const [id, spec] of mountStatuses(volumes, currentMounts())) await systemFacts.apply('runtime', MOUNT_STATUS_TYPE, id, spec);
    },
    // The machine's identity, once, before the daemons start (src/lib/hostname.ts): networkd
    // reads it from the run directory for its default hostname.
    hostname: () => {
      const stateDir = process.env.BRONZE_STATE_DIR ?? '/system/state';
      const id = machineIdentity({ stateDir });
      writeIdentityFile(id);
      const onDisk = volumes?.mounted.some((m) => m.label === 'STATE');
      if (id?.source === 'machine-id' && !onDisk) log.warn('identity: no SMBIOS UUID and no physical link; the machine id lives in memory-backed STATE and changes at every boot');
      const given = cmdline().get('bronze.hostname');
      const name = given || stableHostname(id?.value);
      sethostname(name);
      if (pid1) fs.writeFileSync('/system/etc/hostname', `${name}\n`, { mode: 0o644 });
      log.info(`hostname set to ${name} (${given ? 'kernel argument bronze.hostname' : `derived from ${describeIdentity(id)}`})`);
    },
    // With ctrl-alt-del "off", the kernel sends SIGINT to PID 1 instead of rebooting at once.
    ctrlAltDelSignal: () => reboot(REBOOT.CAD_OFF),
    // A host run (not PID 1) may name a file; a node reads STATE, then kernel arguments.
    loadConfig: async () => {
      await nodeConfig.boot(cmdline(), !pid1 ? process.env.BRONZE_CONFIG_FILE : undefined);
      const stateVolume = volumes?.statuses.STATE;
      if (pid1 && stateVolume?.phase === 'ready') {
        syncStateEncryption(log, { metaDevice: volumes?.disk?.partitions.META?.device, device: volumes?.disk?.partitions.STATE?.device, encrypted: stateVolume.encryptionProvider === 'luks2' }, configText);
      }
      await lifecycle.boot();
    },
    startReaper: () => reaper.start(),
    startApi: async () => {
      await publishNamespaces(state, NAMESPACES);
      await publishDefinitions(state, registry);
      if (pid1) {
        await systemFacts.apply('runtime', SECURITY_STATE_TYPE, SECURITY_STATE_ID, readSecurityState());
        const rootfs = readRootfsStatus(systemProbe(cmdline));
        if (rootfs.verified) log.info(`rootfs: ${rootfs.device} (${rootfs.filesystemType}) verified by dm-verity (${rootfs.mapperName}, ${rootfs.hashAlgorithm}, root hash ${rootfs.rootHash})`);
        else log.warn(`rootfs: ${rootfs.device || '/'} is not verified: ${rootfs.reason}`);
        await systemFacts.apply('runtime', ROOTFS_STATUS_TYPE, ROOTFS_STATUS_ID, rootfs);
      }
      controllers.start();
      machinedApi = await startMachinedApi({
        supervisor,
        log,
        events,
        state,
        registry,
        requestSequence: (seq, reason, actorId) => request(seq, reason, actorId),
        generateClientConfiguration: (req) => nodeConfig.generateClientConfiguration(req),
        applyConfiguration: (req) => nodeConfig.applyConfiguration(req),
        lifecycle: quorumGuardedLifecycle(lifecycle, {
          quorumCheck: cluster.quorumCheck,
          isMember: cluster.isMember,
          leave: () => leaveCluster(cluster.api, { check: false, operation: 'reset' }),
          log: (m) => log.info(m),
        }),
        etcd: cluster.api,
        clusterRegistry: cluster.registryService,
        powerCheck: cluster.powerCheck,
        onError: (m) => log.warn(m),
      });
      // What the first API calls need, made now rather than while the first caller waits (api/warm.ts).
      setImmediate(() => void warmApi({ state, registry }).catch((err: Error) => log.warn(`warming the API: ${err.message}`)));
    },
    startServices: () => {
      supervisor.start();
      servicesStarted = true;
      cluster.registry.start();
      // A configuration from the kernel arguments may name an install disk.
      if (pid1 && configText !== undefined) void lifecycle.maybeInstall(configText);
    },
    watchPowerButton: () => watchPowerButton(log, () => void request('shutdown', 'power button')),
    stopServices: async () => {
      // An install or upgrade writing to the disk finishes first; no new one starts.
      await lifecycle.quiesce();
      nodeConfig.stop();
      cluster.registry.stop();
      cluster.etcd.stop();
      log.info('stopping services in reverse dependency order');
      await supervisor.stop();
      log.info('all services stopped');
      await machinedApi?.close();
      await controllers.stop();
    },
    sync: () => sync(),
    unmountAll: () => {
      unmountAll(log);
      if (pid1) closeVolumes(log);
    },
    wipeVolumes: () => lifecycle.wipePending(),
    powerOff: () => {
      log.info('powering off');
      reboot(REBOOT.POWER_OFF);
    },
    restart: () => {
      log.info('rebooting');
      reboot(REBOOT.RESTART);
    },
  };

  const conditions = { wipesPending: () => lifecycle.pendingWipes.length > 0 };
  let inFlight: SequenceName | undefined;
  const request = async (seq: SequenceName, why: string, actorId = ''): Promise<void> => {
    if (inFlight) return log.info(`${why}: ${inFlight} already in progress`);
    inFlight = seq;
    log.info(`${why}: starting ${seq} sequence`);
    if (machineStatus.stage !== 'resetting') void machineStatus.setStage(seq === 'reboot' ? 'rebooting' : 'shutting down');
    events.publishSequence(seq, 'START', { actorId });
    await runSequence(seq, tasks, { pid1, log: (m) => log.info(m), conditions });
    if (!pid1) process.exit(0);
  };

  process.on('SIGTERM', () => void request('shutdown', 'SIGTERM'));
  process.on('SIGINT', () => void request('shutdown', pid1 ? 'ctrl-alt-del (SIGINT)' : 'SIGINT'));
  // PID 1 must not die: the kernel would panic. Log and carry on.
  process.on('uncaughtException', (err) => log.error(`uncaught: ${err.stack ?? err.message}`));
  process.on('unhandledRejection', (err) => log.error(`unhandled rejection: ${(err as Error)?.stack ?? String(err)}`));

  await runSequence('boot', tasks, { pid1, log: (m) => log.info(m), conditions });
}
