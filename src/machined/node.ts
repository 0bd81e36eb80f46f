// machined's parts, built in dependency order: the resource state, the cluster parts, the
// supervisor of the daemons, the controllers, the node's lifecycle and its configuration. Two
// pairs need each other, and reach each other through this object once both exist: the cluster
// parts ask the supervisor about etcd, and the lifecycle asks the configuration whether the boot
// may be committed. The boot tasks (boot-tasks.ts) run on these parts; the sequences
// (sequences.ts) say in which order.
import type { KmsgLogger } from '../lib/log.ts';
import type { RoleHandoff } from '../role-entry.ts';
import { VERSION } from '../version.ts';
import { optimizeFrom } from '../lib/role-source.ts';
import { splitHostPort } from '../lib/hostport.ts';
import { StatePublisher } from '../daemon/publisher.ts';
import { MemoryState } from '../state/memory.ts';
import { ControllerRuntime, registerControllers } from '../state/controller.ts';
import { DefinitionRegistry } from '../contract/resources/registry.ts';
import { apidListenAddress, runDir, secretsDir } from '../contract/paths.ts';
import { readCmdline, type Cmdline } from './cmdline.ts';
import { Reaper, spawnedChildren } from './reaper.ts';
import { runSequence, type SequenceName, type TaskName } from './sequences.ts';
import { SERVICE_ENV, baseServiceEnv, serviceSpecs } from './services.ts';
import { NODE_CONTAINERD, containerdSpec, hostContainerd } from './containerd/service.ts';
import { cgroupFs, servicePlacement } from './cgroups.ts';
import { Supervisor } from './supervisor/supervisor.ts';
import { EventBus, mirrorServiceEvents } from './api/events.ts';
import { NodeConfig } from './node-config.ts';
import { metaRecordStore } from './recovery.ts';
import type { MountedVolumes } from './volumes.ts';
import { NodeLifecycle } from './lifecycle/lifecycle.ts';
import { MachineStatusReporter } from './machine-status.ts';
import { validateMachineConfig } from './config/validation.ts';
import { clusterParts, type ClusterParts } from './cluster/cluster.ts';
import { memberIdReader } from './cluster/member-id.ts';
import { machinedControllers } from './registrations.ts';
import { NodeWorkloads } from './workloads/node-workloads.ts';
import { debugAids } from './debug-aids.ts';
import { watchAllRunning, type AllRunning } from './all-running.ts';

export type Tasks = Record<TaskName, () => void | Promise<void>>;

export interface NodeOptions {
  pid1: boolean;
  log: KmsgLogger;
  handoff: RoleHandoff;
  /** The boot tasks on this node's parts (boot-tasks.ts; passed in by main.ts, since the tasks
   *  take this node's type and an import of them here would close a type circle). */
  tasks: (node: MachinedNode) => Tasks;
}

export class MachinedNode {
  readonly pid1: boolean;
  readonly log: KmsgLogger;
  readonly cmdline = (): Cmdline => readCmdline();
  readonly stateDir = process.env.BRONZE_STATE_DIR ?? '/system/state';
  // Resources and events: the state the API exposes, fed by controllers.
  readonly state = new MemoryState();
  readonly registry = new DefinitionRegistry();
  readonly events = new EventBus();
  /** What machined reads of the system once: the mounted volumes and the security state. */
  readonly systemFacts: StatePublisher;
  readonly machineStatus: MachineStatusReporter;
  /** etcd (control planes), the quorum checks and the cluster registry (Members). */
  readonly cluster: ClusterParts;
  readonly supervisor: Supervisor;
  /** Whether this run supervises etcd (a host run may leave it out). */
  readonly withEtcd: boolean;
  readonly reaper: Reaper;
  readonly controllers: ControllerRuntime;
  /** containerd and the declared containers. */
  readonly workloads: NodeWorkloads;
  readonly lifecycle: NodeLifecycle;
  readonly nodeConfig: NodeConfig;
  readonly allRunning: AllRunning;

  /** What the boot tasks found or started. */
  configText: string | undefined;
  volumes: MountedVolumes | undefined;
  machinedApi: { close(): Promise<void> } | undefined;
  servicesStarted = false;

  readonly #tasks: Tasks;
  #inFlight: SequenceName | undefined;

  constructor(o: NodeOptions) {
    const { pid1, log, handoff } = o;
    this.pid1 = pid1;
    this.log = log;
    // A host run may supervise a subset: BRONZE_SERVICES=apid,timed.
    const only = !pid1 && process.env.BRONZE_SERVICES ? process.env.BRONZE_SERVICES.split(',').filter(Boolean) : undefined;
    const serviceEnv: Record<string, string> = { ...SERVICE_ENV };
    const listenHost = splitHostPort(apidListenAddress()).host;
    this.systemFacts = new StatePublisher(this.state, 'machined');
    this.machineStatus = new MachineStatusReporter(this.state, log);

    this.cluster = clusterParts({
      log,
      state: this.state,
      configText: () => this.configText,
      secretsDir: secretsDir(),
      nodeId: memberIdReader(this.stateDir, log),
      osVersion: VERSION.tag,
      etcdState: () => this.supervisor.get('etcd')?.state,
      stopEtcd: () => this.supervisor.stopService('etcd'),
      listenHost,
    });
    const daemons = serviceSpecs(serviceEnv, only?.filter((id) => id !== 'etcd' && id !== 'containerd'));
    this.withEtcd = !only || only.includes('etcd');
    const etcdSpec = { ...this.cluster.etcdSpec(serviceEnv), dependsOn: ['apid', 'networkd'].filter((d) => daemons.some((s) => s.id === d)) };
    // containerd: the rootfs's on a node; a host run has it only when BRONZE_SERVICES names it.
    const withContainerd = pid1 || !!only?.includes('containerd');
    const containerd = containerdSpec(pid1 ? NODE_CONTAINERD : hostContainerd(runDir()), baseServiceEnv(serviceEnv));
    this.supervisor = new Supervisor([...daemons, ...(this.withEtcd ? [etcdSpec] : []), ...(withContainerd ? [containerd] : [])], {
      log: (m) => log.info(m),
      adopt: handoff.firstServices,
      // As PID 1: each service in its own cgroup, with its OOM score (cgroups.ts).
      placement: pid1 ? servicePlacement({ fs: cgroupFs(), log }) : undefined,
    });
    if (handoff.firstServices?.size) log.info(`started first, before machined loaded: ${[...handoff.firstServices.keys()].join(', ')}`);
    // Never the children libuv waits for: the daemons, and whatever machined's own work spawns.
    const children = spawnedChildren();
    this.reaper = new Reaper(() => new Set([...this.supervisor.pids(), ...children()]), log);

    // The operator's containers: commit a tried slot only once they run and are healthy, give
    // the trial up when one fails for good (issue 45, item 7).
    this.workloads = new NodeWorkloads({
      log,
      socket: pid1 ? NODE_CONTAINERD.address : hostContainerd(runDir()).address,
      onSettled: () => {
        if (this.allRunning.reached) void this.lifecycle.running();
      },
      onFailure: (why) => void this.lifecycle.abandonTrial(why),
    });
    this.workloads.follow(this.supervisor);
    this.controllers = new ControllerRuntime(this.state, { log });
    registerControllers(
      this.controllers,
      machinedControllers(
        { supervisor: this.supervisor, serviceEnv, volumes: () => (this.volumes?.mounted ?? []).map((m) => ({ label: m.label, mountpoint: m.target })), workloads: this.workloads, log },
        pid1,
      ),
    );
    mirrorServiceEvents(this.supervisor, this.events);

    this.lifecycle = new NodeLifecycle({
      log,
      state: this.state,
      cmdline: this.cmdline,
      volumes: () => this.volumes,
      configText: () => this.configText,
      requestSequence: (seq, reason, actorId) => this.request(seq, reason, actorId),
      status: this.machineStatus,
      // A tried slot that could not use the configuration is not committed (recovery.ts).
      holdCommit: (): string | undefined => (this.nodeConfig.locked ? `the configuration could not be used at boot (${this.nodeConfig.locked[0]})` : this.workloads.holdCommit()),
    });
    const lifecycle = this.lifecycle;
    this.nodeConfig = new NodeConfig({
      state: this.state,
      log,
      secretsDir: secretsDir(),
      stateDir: this.stateDir,
      validate: validateMachineConfig,
      reboot: (reason) => void this.request('reboot', reason),
      extraAddresses: () => (listenHost === '::' || listenHost === '0.0.0.0' ? [] : [listenHost]),
      certTtlMs: Number(process.env.BRONZE_API_CERT_TTL_MS ?? 24 * 3600 * 1000),
      certCheckMs: Number(process.env.BRONZE_API_CERT_CHECK_MS ?? 30_000),
      trustdPort: Number(process.env.BRONZE_TRUSTD_PORT ?? 50001),
      onActivated: (text) => this.activated(text),
      // STATE on a disk survives a reboot; memory-backed (ISO, PXE, bare kernel) it does not.
      statePersistent: () => !pid1 || !!this.volumes?.mounted.some((m) => m.label === 'STATE'),
      status: this.machineStatus,
      stateVolume: () => this.volumes?.statuses.STATE,
      // Only a node installs: a host run must never write to the host's disks.
      installNotice: pid1 ? (text) => lifecycle.installNotice(text) : undefined,
      // META: the configuration record and recovery identity (a host run may name a file for it).
      meta: () => {
        const dev = this.metaDevice();
        return dev ? metaRecordStore(dev) : undefined;
      },
      event: (type, error) => void this.events.publish(type, { error }),
    });

    const debug = debugAids(this.supervisor, this.cmdline, log);
    this.allRunning = watchAllRunning(this.supervisor, {
      log,
      etcdWaiting: () => this.cluster.etcd.waiting,
      onRunning: () => {
        optimizeFrom('machined', 'running');
        debug.afterRunning();
        void lifecycle.running();
      },
    });
    this.#tasks = o.tasks(this);
  }

  /** META: the partition of the node's disk, or in a host run the file BRONZE_META_FILE names; undefined: none. */
  metaDevice(): string | undefined {
    return (this.pid1 ? this.volumes?.disk?.partitions.META?.device : process.env.BRONZE_META_FILE) || undefined;
  }

  /** A configuration became the node's (at boot, or applied later). */
  activated(text: string): void {
    this.configText = text;
    // A tried slot held back because the configuration could not be used: commit it now.
    if (this.allRunning.reached) void this.lifecycle.running();
    // Only a node installs: a host run must never write to the host's disks.
    if (this.pid1 && this.servicesStarted) void this.lifecycle.maybeInstall(text);
    // A configuration applied later may make this node a control plane: etcd's condition again.
    if (this.servicesStarted && this.withEtcd && this.supervisor.get('etcd')?.state === 'Skipped') void this.supervisor.startService('etcd');
    this.cluster.registry.poke();
  }

  /** Runs a shutdown or reboot sequence, unless one is already under way. */
  async request(seq: SequenceName, why: string, actorId = ''): Promise<void> {
    if (this.#inFlight) return this.log.info(`${why}: ${this.#inFlight} already in progress`);
    this.#inFlight = seq;
    this.log.info(`${why}: starting ${seq} sequence`);
    if (this.machineStatus.stage !== 'resetting') void this.machineStatus.setStage(seq === 'reboot' ? 'rebooting' : 'shutting down');
    this.events.publishSequence(seq, 'START', { actorId });
    await this.#run(seq);
    if (!this.pid1) process.exit(0);
  }

  boot(): Promise<void> {
    return this.#run('boot');
  }

  #run(seq: SequenceName): Promise<void> {
    const conditions = { wipesPending: () => this.lifecycle.pendingWipes.length > 0 };
    return runSequence(seq, this.#tasks, { pid1: this.pid1, log: (m) => this.log.info(m), conditions });
  }
}
