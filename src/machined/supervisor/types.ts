// The supervisor's public types: what a service is (ServiceSpec), what it reports (ServiceInfo,
// its state and events), and the supervisor's options. The states follow Talos: Waiting →
// Preparing → Running, then Finished / Failed, or Skipped when a condition is false.

import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

export type ServiceState = 'Waiting' | 'Preparing' | 'Running' | 'Finished' | 'Failed' | 'Skipped';

export interface ServiceEvent {
  ts: Date;
  state: ServiceState;
  message: string;
}

export interface ServiceSpec {
  id: string;
  /** Ids that must be up (Running and healthy, Skipped, or Finished) before this one starts. */
  dependsOn: string[];
  /**
   * Ids that must have stopped before this one is stopped, without waiting for them at start
   * (networkd outlives apid at shutdown: apid's last replies leave through the network).
   */
  stopAfter?: string[];
  /** Executable path. */
  command: string;
  args?: string[];
  /** Passed as spawn's argv0 (the multi-call binary picks its role from it). */
  argv0?: string;
  /** The child's whole environment; when absent the child inherits machined's. */
  env?: Record<string, string>;
  /**
   * The user and group it runs as (no supplementary groups), and the only capabilities it
   * keeps (ambient, lib/capabilities.ts); absent: as machined (root).
   */
  user?: { uid: number; gid: number; capabilities?: readonly string[] };
  /** Runs right before every spawn (e.g. the directories its user must reach); a throw is a failed start. */
  beforeStart?: () => void;
  /** Rejects when unhealthy; polled every healthInterval while the process runs. */
  healthCheck?: () => Promise<void>;
  /** ms, default 1000. */
  healthInterval?: number;
  /** ms between SIGTERM and SIGKILL, default 10000. */
  stopTimeout?: number;
  /** Default 'always'. */
  restart?: 'always' | 'on-failure' | 'never';
  /**
   * The nice value the process starts at; it returns to 0 once it is listening (`listening`) or
   * its first health check passes, whichever comes first. For a service that nothing waits on
   * while it loads: on a small machine it leaves the CPUs to the services already up (the API)
   * instead of taking an equal share from them, and serves at full priority.
   */
  startNice?: number;
  /** Whether the process listens yet (its socket exists); asked while it starts at startNice. */
  listening?: () => boolean;
  /**
   * The process says when it is ready: it gets a pipe as descriptor 3 (BRONZE_READY_FD,
   * lib/ready.ts) and writes READY=1 there. From that line it counts as healthy, before its
   * first health check has passed; the checks follow at healthInterval as for any service.
   */
  notifiesReady?: boolean;
  /** false → Skipped (e.g. trustd only on control planes). Evaluated on every start request. */
  condition?: () => boolean | Promise<boolean>;
  /**
   * Talos's PreFunc: once the dependencies are up, the service stays Preparing until this
   * resolves, with the arguments and environment to start with (each replaces the spec's when
   * given); `report` sets the message Preparing shows (e.g. what it waits for). A rejection
   * counts as a failed start (restart policy and backoff); a stop aborts `signal`.
   */
  prepare?: (signal: AbortSignal, report: (message: string) => void) => Promise<{ args?: string[]; env?: Record<string, string> } | void>;
}

export interface ServiceInfo {
  id: string;
  state: ServiceState;
  pid?: number;
  /** Result of the last health check of the current process; undefined before the first one
   *  and for services without a health check. */
  healthy?: boolean;
  lastHealthMessage?: string;
  /** Automatic restarts after the process exited (manual restarts are not counted). */
  restarts: number;
  events: ServiceEvent[];
}

/** A process started for a service before the supervisor, and its output. */
export interface AdoptedProcess {
  child: ChildProcess;
  stdout: Readable;
  stderr: Readable;
  /** Its ready pipe (descriptor 3), when it was started as a spec with notifiesReady. */
  ready?: Readable;
}

export interface SupervisorOptions {
  /** First restart delay in ms, doubled on every consecutive restart. Default 1000. */
  backoffBase?: number;
  /** Upper bound of the restart delay in ms. Default 30000. */
  backoffMax?: number;
  /** Lines of output kept per service. Default 1000. */
  logLines?: number;
  /** A process that stayed up this long (ms) restarts with the base delay again. Default 30000. */
  stableAfter?: number;
  /** Receives every captured line, prefixed with "<id>: ". */
  log?: (msg: string) => void;
  /**
   * Processes already started for some services (machined's first moments as PID 1, see
   * early.ts), with stdout and stderr piped: each becomes its service's first run instead of a
   * spawn. Until then they count among pids(), so that the reaper leaves them alone.
   */
  adopt?: ReadonlyMap<string, AdoptedProcess>;
  /** Failed health checks in a row that make a service that has passed one unhealthy. Default 3. */
  healthFailures?: number;
  /** Upper bound (ms) of the delay between checks of a failing service, and of one check's time. Default 30000 and 10000. */
  healthBackoffMax?: number;
  healthTimeoutMax?: number;
  /**
   * Called with each service process as soon as it runs (spawned, or taken over), before
   * anything waits on it: machined as PID 1 moves it into its cgroup and sets its OOM score
   * there (cgroups.ts). Must not throw.
   */
  placement?: (pid: number, id: string) => void;
}
