// The node's cgroup v2 layout, as data, and what machined does with it: make the groups at boot
// (Talos's CreateSystemCgroups), move itself into /init, and put each service's process into its
// group with its OOM score once it has started (Talos's process runner).
//
// Talos's layout and figures (pkg/machinery/constants, internal/pkg/cgroup): machined in /init,
// the services under /system/<service>, the containerd at /system/run/containerd's socket in
// /system/runtime, etcd in /podruntime/etcd. The operator's containers go under
// /taloscontainers/<name>: the path containerd's client gives a container of the
// `taloscontainers` namespace (Talos's for ContainerConfig) when it names none, so a container
// lands there even if its spec forgets. Its shims stay with containerd in /system/runtime, as
// Talos's system containerd's do.
//
// Memory protection is Talos's: memory.min (hard) and memory.low (soft, twice min) for machined,
// the system services and containerd, so that a container that allocates without limit is
// reclaimed and OOM-killed before them. Bronze's own departures, each said where it is: apid
// and trustd get a higher memory.max, networkd a reservation (Talos runs its networking inside
// machined), and the containers' parent a CPU weight below the services' and a pids cap.
//
// Nothing here fails a boot: a controller the kernel lacks or a file it refuses is logged and
// skipped. Only PID 1 on a node applies it (a host run's processes stay where they are).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONTAINERS_CGROUP_PARENT } from '../containerd/spec.ts';
import { sleep } from '../lib/sleep.ts';

export const CGROUP_MOUNT = '/sys/fs/cgroup';
export const CGROUP_INIT = '/init';
export const CGROUP_SYSTEM = '/system';
export const CGROUP_PODRUNTIME = '/podruntime';
/** containerd (Talos's CgroupSystemRuntime). */
export const CGROUP_RUNTIME = '/system/runtime';
/**
 * The parent of the operator's containers: containerd's default for the `taloscontainers`
 * namespace, the runtime's parent of each container's own (src/containerd/spec.ts).
 */
export const CGROUP_CONTAINERS = CONTAINERS_CGROUP_PARENT;

const MiB = 1024 * 1024;

export interface CgroupSpec {
  /** Relative to the mount, with a leading slash. */
  path: string;
  /** Hard protection (memory.min), bytes; memory.low is twice this unless `memoryLow` says. */
  memoryMin?: number;
  memoryLow?: number;
  /** Hard limit (memory.max), bytes. */
  memoryMax?: number;
  /** memory.swap.max (0: none), where the kernel has swap accounting. */
  swapMax?: number;
  /** The CPU share, as Talos gives it in millicores (turned into cpu.weight). */
  cpuMillicores?: number;
  /** pids.max. */
  pidsMax?: number;
  purpose: string;
}

/** Every group machined makes at boot, parents before children. */
export const CGROUP_LAYOUT: readonly CgroupSpec[] = [
  { path: CGROUP_INIT, memoryMin: 96 * MiB, swapMax: 0, cpuMillicores: 2000, purpose: 'machined (PID 1) and what it runs itself' },
  { path: CGROUP_SYSTEM, memoryMin: 96 * MiB, cpuMillicores: 1500, purpose: "Bronze's services" },
  // Talos: 16 MiB min, 128 MiB max. Bronze's apid is a Node process that reaches ~110 MiB RSS
  // under sustained load (docs/performance.md), so its ceiling is twice Talos's.
  { path: '/system/apid', memoryMin: 16 * MiB, memoryMax: 256 * MiB, swapMax: 0, cpuMillicores: 500, purpose: 'apid' },
  { path: '/system/trustd', memoryMin: 8 * MiB, memoryMax: 256 * MiB, swapMax: 0, cpuMillicores: 250, purpose: 'trustd' },
  { path: '/system/udevd', memoryMin: 8 * MiB, swapMax: 0, cpuMillicores: 250, purpose: 'udevd' },
  // Not in Talos (its networking and time sync live inside machined): networkd brings up the
  // links the API answers on, so it is protected like udevd; timed is not.
  { path: '/system/networkd', memoryMin: 8 * MiB, swapMax: 0, cpuMillicores: 250, purpose: 'networkd' },
  { path: '/system/timed', cpuMillicores: 100, purpose: 'timed' },
  { path: CGROUP_RUNTIME, memoryMin: 48 * MiB, swapMax: 0, cpuMillicores: 500, purpose: 'containerd and its shims' },
  // Talos's etcd has soft protection only (memory.low 256 MiB); its parent holds that much too.
  { path: CGROUP_PODRUNTIME, memoryLow: 256 * MiB, cpuMillicores: 2000, purpose: 'etcd (control planes)' },
  { path: '/podruntime/etcd', memoryLow: 256 * MiB, swapMax: 0, cpuMillicores: 2000, purpose: 'etcd' },
  // Bronze's: under contention the containers together get less CPU than the services (weight
  // 39 against /init's 79 and /system's 59 on two cores), and a fork bomb stops at half the
  // kernel's default pid_max, leaving the rest to the node. Each container has its own limits.
  { path: CGROUP_CONTAINERS, cpuMillicores: 1000, pidsMax: 16384, purpose: "the operator's containers" },
];

/** Where each supervised service runs, and its OOM score (Talos's, where Talos has the service). */
export const SERVICE_CGROUPS: Readonly<Record<string, { cgroup: string; oomScoreAdj?: number }>> = {
  apid: { cgroup: '/system/apid', oomScoreAdj: -998 },
  trustd: { cgroup: '/system/trustd', oomScoreAdj: -998 },
  udevd: { cgroup: '/system/udevd' },
  networkd: { cgroup: '/system/networkd' },
  timed: { cgroup: '/system/timed' },
  containerd: { cgroup: CGROUP_RUNTIME, oomScoreAdj: -999 },
  etcd: { cgroup: '/podruntime/etcd', oomScoreAdj: -998 },
};

/** The controllers machined enables down to every group that has children (those the kernel has). */
export const CONTROLLERS = ['cpu', 'memory', 'pids', 'io'] as const;

/** Talos's millicores → cpu.weight (shares 1024 per core, then the cgroup v1→v2 mapping), capped at the machine's cores. */
export function cpuWeight(millicores: number, cores: number): number {
  const shares = Math.floor((Math.min(millicores, cores * 1000) * 1024) / 1000);
  return Math.floor(((shares - 2) * 9999) / 262142) + 1;
}

/**
 * Below this much memory the layout's reservations are soft only (memory.low, no memory.min):
 * Talos's figures assume a machine of 2 GiB or more. On a 512 MiB node, 192 MiB held hard for
 * /init and /system left an upgrade's staging no memory to reclaim, and the kernel killed
 * networkd instead (the Secure Boot upgrade e2e test, 2026-12-07).
 */
export const HARD_MEMORY_PROTECTION_MIN_BYTES = 2 * 1024 * MiB;

/** The control files of one group and what goes in them, in the order they are written. */
export function cgroupSettings(spec: CgroupSpec, cores: number, hardMemory = true): Array<[file: string, value: string]> {
  const out: Array<[string, string]> = [];
  if (spec.memoryMin !== undefined && hardMemory) out.push(['memory.min', String(spec.memoryMin)]);
  const low = spec.memoryLow ?? (spec.memoryMin !== undefined ? spec.memoryMin * 2 : undefined);
  if (low !== undefined) out.push(['memory.low', String(low)]);
  if (spec.memoryMax !== undefined) out.push(['memory.max', String(spec.memoryMax)]);
  if (spec.swapMax !== undefined) out.push(['memory.swap.max', String(spec.swapMax)]);
  if (spec.cpuMillicores !== undefined) out.push(['cpu.weight', String(cpuWeight(spec.cpuMillicores, cores))]);
  if (spec.pidsMax !== undefined) out.push(['pids.max', String(spec.pidsMax)]);
  return out;
}

/** What machined touches of the cgroup filesystem (an in-memory one in tests). */
export interface CgroupFs {
  /** Makes the group (and its parents); no error if it exists. */
  mkdir(group: string): void;
  read(group: string, file: string): string;
  /** Writes an existing control file. */
  write(group: string, file: string, value: string): void;
}

export function cgroupFs(mount = CGROUP_MOUNT): CgroupFs {
  const at = (group: string, file = '') => path.join(mount, group, file);
  return {
    mkdir: (group) => void fs.mkdirSync(at(group), { recursive: true }),
    read: (group, file) => fs.readFileSync(at(group, file), 'utf8'),
    // 'r+': a control file is never created (cgroupfs refuses, a test's tree must not grow one).
    write: (group, file, value) => {
      const fd = fs.openSync(at(group, file), 'r+');
      try {
        fs.writeSync(fd, value);
      } finally {
        fs.closeSync(fd);
      }
    },
  };
}

interface Log {
  info(msg: string): void;
  warn(msg: string): void;
}

/** The parents of a group, root first: '/system/apid' → ['/', '/system']. */
function parentsOf(group: string): string[] {
  const parts = group.split('/').filter(Boolean);
  return parts.map((_, i) => `/${parts.slice(0, i).join('/')}`);
}

/**
 * Makes the layout: the controllers enabled in every parent's cgroup.subtree_control, each
 * group with its settings; then moves `selfPid` (machined) into /init. Returns what failed
 * (also logged), for the test and the log line.
 */
export function setupCgroups(o: { fs: CgroupFs; log: Log; selfPid?: number; cores?: number; layout?: readonly CgroupSpec[]; memoryBytes?: number }): string[] {
  const hardMemory = (o.memoryBytes ?? os.totalmem()) >= HARD_MEMORY_PROTECTION_MIN_BYTES;
  const { fs: cg, log } = o;
  const layout = o.layout ?? CGROUP_LAYOUT;
  const cores = o.cores ?? os.availableParallelism();
  const problems: string[] = [];
  const problem = (what: string, err: unknown) => {
    const msg = `${what}: ${(err as Error).message}`;
    problems.push(msg);
    log.warn(`cgroups: ${msg}`);
  };
  let available: string[];
  try {
    available = cg.read('/', 'cgroup.controllers').trim().split(/\s+/).filter(Boolean);
  } catch (err) {
    problem('reading the root cgroup.controllers (is cgroup2 mounted?)', err);
    return problems;
  }
  const enable = CONTROLLERS.filter((c) => available.includes(c));
  const missing = CONTROLLERS.filter((c) => !available.includes(c));
  if (missing.length) problem('controllers', new Error(`the kernel lacks ${missing.join(', ')}`));
  const delegated = new Set<string>();
  const delegate = (group: string) => {
    if (delegated.has(group) || enable.length === 0) return;
    delegated.add(group);
    try {
      cg.write(group, 'cgroup.subtree_control', enable.map((c) => `+${c}`).join(' '));
    } catch (err) {
      problem(`enabling ${enable.join(', ')} below ${group}`, err);
    }
  };
  for (const spec of layout) {
    for (const parent of parentsOf(spec.path)) delegate(parent);
    try {
      cg.mkdir(spec.path);
    } catch (err) {
      problem(`making ${spec.path}`, err);
      continue;
    }
    for (const [file, value] of cgroupSettings(spec, cores, hardMemory)) {
      try {
        cg.write(spec.path, file, value);
      } catch (err) {
        // memory.swap.max is absent without swap accounting: nothing to limit then.
        if (file === 'memory.swap.max' && (err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        problem(`${spec.path}/${file}=${value}`, err);
      }
    }
  }
  if (o.selfPid !== undefined) {
    try {
      cg.write(CGROUP_INIT, 'cgroup.procs', String(o.selfPid));
    } catch (err) {
      problem(`moving machined (pid ${o.selfPid}) into ${CGROUP_INIT}`, err);
    }
  }
  log.info(`cgroups: ${layout.length} groups made (${enable.join(', ') || 'no controllers'}), machined in ${CGROUP_INIT}${problems.length ? `; ${problems.length} problem(s) above` : ''}`);
  return problems;
}

/**
 * What is left in these groups at shutdown, once the services have stopped, is killed (Talos
 * kills kubepods, podruntime and system the same way): the operator's containers first, then
 * the shims (in containerd's group), so that nothing holds /var when it is unmounted.
 */
export const KILLED_AT_SHUTDOWN: readonly string[] = [CGROUP_CONTAINERS, CGROUP_PODRUNTIME, CGROUP_SYSTEM];

/** cgroup.kill on each group (its whole subtree), then waits up to `waitMs` for each to be empty (cgroup.events). */
export async function killCgroups(o: { fs: CgroupFs; log: Log; groups?: readonly string[]; waitMs?: number }): Promise<void> {
  for (const group of o.groups ?? KILLED_AT_SHUTDOWN) {
    const populated = () => {
      try {
        return /^populated 1$/m.test(o.fs.read(group, 'cgroup.events'));
      } catch {
        return false; // no such group
      }
    };
    if (!populated()) continue;
    try {
      o.fs.write(group, 'cgroup.kill', '1');
    } catch (err) {
      o.log.warn(`cgroups: killing what is left in ${group}: ${(err as Error).message}`);
      continue;
    }
    o.log.info(`cgroups: killed what was left in ${group}`);
    const deadline = Date.now() + (o.waitMs ?? 5000);
    while (populated() && Date.now() < deadline) await sleep(50);
    if (populated()) o.log.warn(`cgroups: ${group} still has processes ${o.waitMs ?? 5000} ms after cgroup.kill`);
  }
}

/** Writes /proc/<pid>/oom_score_adj (a file root in tests). */
export type OomScoreWriter = (pid: number, score: number) => void;

export const procOomScore: OomScoreWriter = (pid, score) => fs.writeFileSync(`/proc/${pid}/oom_score_adj`, String(score));

/**
 * The supervisor's placement of a started service process (SupervisorOptions.placement): into
 * its group (SERVICE_CGROUPS), with its OOM score. A service without an entry stays in
 * machined's group; a process gone already (ESRCH, ENOENT) is no error.
 */
export function servicePlacement(o: { fs: CgroupFs; log: Log; oomScore?: OomScoreWriter; services?: typeof SERVICE_CGROUPS }): (pid: number, id: string) => void {
  const services = o.services ?? SERVICE_CGROUPS;
  const oom = o.oomScore ?? procOomScore;
  const gone = (err: unknown) => ['ESRCH', 'ENOENT'].includes((err as NodeJS.ErrnoException).code ?? '');
  return (pid, id) => {
    const place = services[id];
    if (!place) return;
    try {
      o.fs.mkdir(place.cgroup); // made at boot; again in case it was removed
      o.fs.write(place.cgroup, 'cgroup.procs', String(pid));
    } catch (err) {
      if (!gone(err)) o.log.warn(`cgroups: moving ${id} (pid ${pid}) into ${place.cgroup}: ${(err as Error).message}`);
    }
    if (place.oomScoreAdj !== undefined) {
      try {
        oom(pid, place.oomScoreAdj);
      } catch (err) {
        if (!gone(err)) o.log.warn(`cgroups: oom_score_adj ${place.oomScoreAdj} for ${id} (pid ${pid}): ${(err as Error).message}`);
      }
    }
  };
}

/** An in-memory CgroupFs: groups are made with the control files a cgroup2 group has. */
export function memoryCgroupFs(controllers = 'cpuset cpu io memory hugetlb pids rdma misc'): CgroupFs & { files: Map<string, string> } {
  const files = new Map<string, string>();
  const key = (group: string, file: string) => path.posix.join(group, file);
  const CONTROL = ['cgroup.procs', 'cgroup.subtree_control', 'cgroup.kill', 'cgroup.events', 'memory.min', 'memory.low', 'memory.max', 'memory.swap.max', 'cpu.weight', 'pids.max'];
  const groups = new Set<string>();
  const make = (group: string) => {
    if (groups.has(group)) return;
    groups.add(group);
    for (const f of CONTROL) files.set(key(group, f), '');
  };
  make('/');
  files.set('/cgroup.controllers', `${controllers}\n`);
  return {
    files,
    mkdir: (group) => {
      for (const p of [...parentsOf(group), group]) make(p);
    },
    read: (group, file) => {
      const v = files.get(key(group, file));
      if (v === undefined) throw Object.assign(new Error(`ENOENT: ${key(group, file)}`), { code: 'ENOENT' });
      return v;
    },
    write: (group, file, value) => {
      const k = key(group, file);
      if (!files.has(k)) throw Object.assign(new Error(`ENOENT: ${k}`), { code: 'ENOENT' });
      files.set(k, file === 'cgroup.procs' || file === 'cgroup.subtree_control' ? `${files.get(k)}${value}\n` : value);
      // A kill empties the group at once.
      if (file === 'cgroup.kill') files.set(key(group, 'cgroup.events'), 'populated 0\nfrozen 0\n');
    },
  };
}
