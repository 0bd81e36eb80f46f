// The record the supervisor keeps for each service (its state, its current process, its
// output), what the supervisor's parts call back into it for, and small helpers they share.

import type { ChildProcess } from 'node:child_process';
import type { ServiceEvent, ServiceInfo, ServiceSpec, ServiceState } from './types.ts';

/** How a process ended, or why it never started. */
export type Exit = { code: number | null; signal: NodeJS.Signals | null } | { error: Error };

/** One spawned process of a service. */
export interface Run {
  child: ChildProcess;
  pid: number;
  startedAt: number;
  stopping: boolean;
  healthTimer?: NodeJS.Timeout;
  killTimer?: NodeJS.Timeout;
  exited: Promise<void>;
  resolveExited: () => void;
  /** It wrote READY=1 to its ready pipe (ServiceSpec.notifiesReady). */
  ready?: boolean;
  /** Hears of READY=1 (set by the health poller). */
  onReady?: () => void;
}

export interface Service {
  spec: ServiceSpec;
  dependents: string[];
  state: ServiceState;
  events: ServiceEvent[];
  logs: string[];
  followers: Set<(line: string) => void>;
  restarts: number;
  healthy?: boolean;
  lastHealthMessage?: string;
  /** The supervisor keeps it running; false once stopped, finished, failed or skipped. */
  wanted: boolean;
  /** Bumped by every start and stop request, so that stale async work can tell. */
  gen: number;
  /** The condition passed; it spawns as soon as its dependencies are up. */
  pendingStart: boolean;
  /** Exited 0 on its own and will not restart: counts as up for its dependents. */
  completed: boolean;
  /** Consecutive restarts: the exponent of the backoff. */
  attempt: number;
  /** A running prepare step, aborted by a stop. */
  preparing?: AbortController;
  run?: Run;
  restartTimer?: NodeJS.Timeout;
  /** startService callers waiting for the service to leave Waiting/Preparing. */
  settled: Array<() => void>;
}

/** What the supervisor's parts call back into the Supervisor for. */
export interface SupervisorHooks {
  /** Sets the service's state and publishes the event. */
  record(svc: Service, state: ServiceState, message: string): void;
  /** Starts every pending service whose dependencies are up. */
  schedule(): void;
  /** The process ended, or never started: the restart policy decides what follows. */
  exited(svc: Service, exit: Exit): void;
  /** One line of the process's output. */
  line(svc: Service, raw: string): void;
  /** The process is Running: its health checks begin. */
  started(svc: Service, run: Run): void;
  /** Starts the process, with the arguments and environment of the prepare step if any. */
  spawn(svc: Service, prepared?: { args?: string[]; env?: Record<string, string> }): void;
  /** The process runs: put it where it belongs (SupervisorOptions.placement). */
  place(svc: Service, pid: number): void;
}

/** A service not started yet; `dependents` are the services stopped before it. */
export function newService(spec: ServiceSpec, dependents: string[]): Service {
  return {
    spec,
    dependents,
    state: 'Waiting',
    events: [],
    logs: [],
    followers: new Set(),
    restarts: 0,
    wanted: false,
    gen: 0,
    pendingStart: false,
    completed: false,
    attempt: 0,
    settled: [],
  };
}

export function info(svc: Service): ServiceInfo {
  return {
    id: svc.spec.id,
    state: svc.state,
    pid: svc.run?.pid,
    healthy: svc.healthy,
    lastHealthMessage: svc.lastHealthMessage,
    restarts: svc.restarts,
    events: svc.events.map((ev) => ({ ...ev })),
  };
}

export function isPending(state: ServiceState): boolean {
  return state === 'Waiting' || state === 'Preparing';
}

export function pushBounded<T>(items: T[], item: T, max: number): void {
  items.push(item);
  if (items.length > max) items.splice(0, items.length - max);
}

export function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

export function errorMessage(err: unknown): string {
  return toError(err).message;
}
