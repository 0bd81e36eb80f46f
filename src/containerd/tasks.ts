// containerd's Tasks service, one call per function: a task is one run of a container's process
// (runc, under the io.containerd.runc.v2 shim). Plain functions over the generic client, so that
// the runtime reads as the steps it takes.
import { type ContainerdClient, type Timestamp, isNotFound, timestampToDate } from './client.ts';

export const TASKS = 'containerd.services.tasks.v1.Tasks';

/** containerd.types.Mount, as Snapshots.Mounts returns them and Tasks.Create takes them. */
export interface Mount {
  type: string;
  source: string;
  target?: string;
  options: string[];
}

export type TaskStatus = 'UNKNOWN' | 'CREATED' | 'RUNNING' | 'STOPPED' | 'PAUSED' | 'PAUSING';

export interface TaskState {
  pid: number;
  status: TaskStatus;
  exitStatus: number;
  exitedAt: Date;
}

export interface TaskExit {
  exitStatus: number;
  exitedAt: Date;
}

interface ProcessMsg {
  /** Empty in containerd 1.6's replies (services/tasks/local.go getProcessState fills only `id`). */
  container_id: string;
  /** The container's id, for a task's init process. */
  id: string;
  pid: number;
  status: TaskStatus;
  exit_status: number;
  exited_at: Timestamp | null;
}

const state = (p: ProcessMsg): TaskState => ({ pid: p.pid, status: p.status, exitStatus: p.exit_status, exitedAt: timestampToDate(p.exited_at) });

/** Creates the task (runc create: namespaces, cgroup, mounts; the process waits to be started). */
export async function createTask(c: ContainerdClient, ns: string, id: string, rootfs: Mount[], logURI: string): Promise<number> {
  const res = await c.unary<{ pid: number }>(TASKS, 'Create', { container_id: id, rootfs, stdin: '', stdout: logURI, stderr: logURI, terminal: false }, ns);
  return res.pid;
}

/** Starts a created task; resolves with its pid. */
export async function startTask(c: ContainerdClient, ns: string, id: string): Promise<number> {
  return (await c.unary<{ pid: number }>(TASKS, 'Start', { container_id: id }, ns)).pid;
}

/** Resolves when the task exits (containerd answers at once for a task that already has). */
export async function waitTask(c: ContainerdClient, ns: string, id: string, signal?: AbortSignal): Promise<TaskExit> {
  const res = await c.unary<{ exit_status: number; exited_at: Timestamp | null }>(TASKS, 'Wait', { container_id: id }, ns, signal ? { signal } : {});
  return { exitStatus: res.exit_status, exitedAt: timestampToDate(res.exited_at) };
}

/** Sends `signal` to the task's process (`all`: to every process of its cgroup). NOT_FOUND is ignored. */
export async function killTask(c: ContainerdClient, ns: string, id: string, signal: number, all = false): Promise<void> {
  try {
    await c.unary(TASKS, 'Kill', { container_id: id, signal, all }, ns);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** Deletes a stopped task (runc delete: its cgroup and mounts go); undefined when there was none. */
export async function deleteTask(c: ContainerdClient, ns: string, id: string): Promise<TaskExit | undefined> {
  try {
    const res = await c.unary<{ exit_status: number; exited_at: Timestamp | null }>(TASKS, 'Delete', { container_id: id }, ns);
    return { exitStatus: res.exit_status, exitedAt: timestampToDate(res.exited_at) };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** The task's state, undefined when the container has none. */
export async function getTask(c: ContainerdClient, ns: string, id: string): Promise<TaskState | undefined> {
  try {
    const res = await c.unary<{ process: ProcessMsg }>(TASKS, 'Get', { container_id: id }, ns);
    return state(res.process);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Every task of the namespace, by container id. */
export async function listTasks(c: ContainerdClient, ns: string): Promise<Map<string, TaskState>> {
  const res = await c.unary<{ tasks: ProcessMsg[] }>(TASKS, 'List', { filter: '' }, ns);
  return new Map(res.tasks.map((p) => [p.container_id || p.id, state(p)]));
}

/** Tasks.Metrics of the namespace's tasks (or of `ids`): the cgroup metrics Any by container id. */
export async function taskMetrics(c: ContainerdClient, ns: string, ids?: string[]): Promise<Map<string, { type_url: string; value: Uint8Array }>> {
  const filters = ids?.map((id) => `id==${JSON.stringify(id)}`) ?? [];
  const res = await c.unary<{ metrics: { id: string; data: { type_url: string; value: Uint8Array } | null }[] }>(TASKS, 'Metrics', { filters }, ns);
  const out = new Map<string, { type_url: string; value: Uint8Array }>();
  for (const m of res.metrics) if (m.data) out.set(m.id, m.data);
  return out;
}

/** How long a task may take to be reported gone after SIGKILL before stopping it is given up. */
export const KILL_TIMEOUT_MS = 10_000;

/** Whether `p` settles within `ms`. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = p.then(
    () => true,
    () => true,
  );
  const ok = await Promise.race([settled, new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  clearTimeout(timer);
  return ok;
}

/**
 * Stops a task: `stopSignal` to its process, then after `graceMs` SIGKILL to every process of its
 * cgroup; resolves once `exited` (the task's pending Wait) settles. A task already gone is fine;
 * one that SIGKILL does not end (its runc state lost, a process in D state) is an error after
 * KILL_TIMEOUT_MS rather than a wait forever that would hold every later call on the container.
 */
export async function stopTask(c: ContainerdClient, ns: string, id: string, exited: Promise<unknown>, opts: { stopSignal: number; graceMs: number; killTimeoutMs?: number }): Promise<void> {
  await killTask(c, ns, id, opts.stopSignal);
  if (await settlesWithin(exited, opts.graceMs)) return;
  await killTask(c, ns, id, 9, true);
  if (!(await settlesWithin(exited, opts.killTimeoutMs ?? KILL_TIMEOUT_MS))) throw new Error(`task ${ns}/${id} did not exit after SIGKILL`);
}
