// The OCI runtime spec (runtime-spec 1.0.2, as runc 1.1 takes it) of one container, built from a
// ContainerRunSpec and its image's config.
//
// Written by hand: containerd 1.6 leaves the spec to its client (its Go package oci/ builds it
// from SpecOpts), and no JavaScript library builds one. The defaults are containerd's
// (oci/spec.go populateDefaultUnixSpec, oci/spec_opts.go WithImageConfigArgs,
// WithDefaultUnixDevices, WithPrivileged); the profiles are Talos's ContainerConfig ones:
// `restricted` holds no capability beyond what `capabilities.add` names, no devices beyond the
// standard character devices, a read-only rootfs and sysfs, no new privileges and the default
// seccomp profile; `privileged` holds every grantable capability and every host device, with no
// seccomp filter and no masked paths.
import { CAPABILITY_NAMES, NEVER_GRANTED } from '../lib/capability-names.ts';
import type { ContainerRunSpec, RunMount } from './types.ts';
import { goArch, ociSeccomp, type OciSeccomp } from './seccomp.ts';

/**
 * The cgroup every container's own cgroup sits under (`/taloscontainers/<id>`), beside the system
 * services' `/system/<service>` and machined's `/init`: machined's layout (src/machined/cgroups.ts
 * CGROUP_CONTAINERS, this very value) makes it with its CPU weight and pids cap. The runtime
 * takes it as a parameter; this is its default.
 */
export const CONTAINERS_CGROUP_PARENT = '/taloscontainers';
/**
 * The OOM score a container's processes get (process.oomScoreAdj). It must be set: without it
 * they inherit their shim's (containerd's -999 + 1) and would outlive the services in a global
 * OOM. 1000, as Kubernetes gives a pod without requests: the operator's workloads go before any
 * part of the node.
 */
export const CONTAINER_OOM_SCORE_ADJ = 1000;

/**
 * Tasks a container may hold at once (pids.max): enough for any service's workers, few enough that
 * a fork bomb stays in its cgroup and the node keeps forking. Talos sets none for its
 * ContainerConfig containers; 4096 is Docker's documented example and well above busybox httpd,
 * nginx or postgres under load.
 */
export const DEFAULT_PIDS_LIMIT = 4096;

/** RLIMIT_NOFILE of a container: systemd's defaults for services (soft 1024 for select(), hard 512 Ki). */
export const DEFAULT_NOFILE = { soft: 1024, hard: 524288 };

/** DEFAULT_NOFILE clamped to a hard limit the caller holds (`/proc/self/limits`). */
export function nofileWithin(hardLimit: number | undefined): { soft: number; hard: number } {
  if (hardLimit === undefined || hardLimit >= DEFAULT_NOFILE.hard) return { ...DEFAULT_NOFILE };
  return { soft: Math.min(DEFAULT_NOFILE.soft, hardLimit), hard: hardLimit };
}

/** cpu.max's period, in microseconds (the kernel's default CFS period). */
export const CPU_PERIOD_US = 100000;

/** runtime-spec version the spec declares: containerd 1.6's specs-go (runc 1.1 reports the same). */
export const OCI_VERSION = '1.0.2-dev';

/** The `config` object of an OCI image config (image-spec config.json), the fields a spec uses. */
export interface ImageConfig {
  Env?: string[] | null;
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  WorkingDir?: string;
  User?: string;
  /** The signal that asks the process to stop (the runtime's, not the spec's). */
  StopSignal?: string;
}

/** A device node of the host, for privileged containers. */
export interface HostDevice {
  path: string;
  type: 'c' | 'b';
  major: number;
  minor: number;
  fileMode: number;
  uid: number;
  gid: number;
}

export interface SpecContext {
  /** containerd namespace (only in errors and the cgroup name; the id is unique in it). */
  namespace: string;
  /** Parent cgroup of the container's own (default CONTAINERS_CGROUP_PARENT). */
  cgroupParent?: string;
  /** Go arch name of the node (default: this process's). */
  arch?: string;
  /** Kernel release, for the seccomp profile's minKernel rules. */
  kernel?: string;
  /** The host's device nodes (readHostDevices), given to privileged containers. */
  hostDevices?: HostDevice[];
  /**
   * RLIMIT_NOFILE of the container (default DEFAULT_NOFILE). runc cannot raise the hard limit above
   * what containerd itself holds without CAP_SYS_RESOURCE in its own namespace, so the runtime
   * passes DEFAULT_NOFILE clamped to its own hard limit (nofileWithin).
   */
  nofile?: { soft: number; hard: number };
  /**
   * Files of the node a host-network container reads as its own (`/etc/resolv.conf`,
   * `/etc/hosts`), bound read-only: `source` is a copy the runtime keeps per container.
   */
  hostEtcFiles?: { destination: string; source: string }[];
  /** Capability numbers the runtime may grant (its bounding set, ownBoundingCaps); unset: all. */
  bounding?: ReadonlySet<number>;
  /** Resolves an image's named `User` (from the image's /etc/passwd); numeric users need none. */
  resolveUser?: (name: string) => { uid: number; gid: number } | undefined;
}

// The OCI spec's shapes, only as far as Bronze fills them.
export interface OciMount {
  destination: string;
  type: string;
  source: string;
  options: string[];
}
export interface OciDeviceRule {
  allow: boolean;
  type?: 'a' | 'c' | 'b';
  major?: number;
  minor?: number;
  access?: string;
}
export interface OciSpec {
  ociVersion: string;
  process: {
    terminal: boolean;
    user: { uid: number; gid: number; additionalGids?: number[] };
    args: string[];
    env: string[];
    cwd: string;
    capabilities: { bounding: string[]; effective: string[]; permitted: string[]; inheritable: string[]; ambient: string[] };
    rlimits: { type: string; hard: number; soft: number }[];
    noNewPrivileges: boolean;
    oomScoreAdj?: number;
  };
  root: { path: string; readonly: boolean };
  hostname?: string;
  mounts: OciMount[];
  linux: {
    namespaces: { type: string }[];
    maskedPaths?: string[];
    readonlyPaths?: string[];
    cgroupsPath: string;
    devices?: { path: string; type: string; major: number; minor: number; fileMode: number; uid: number; gid: number }[];
    resources: {
      devices: OciDeviceRule[];
      memory?: { limit: number };
      cpu?: { quota: number; period: number };
      pids: { limit: number };
    };
    seccomp?: OciSeccomp;
  };
}

/** containerd's default PATH when the image sets no Env (oci/spec_opts.go defaultUnixEnv). */
const DEFAULT_ENV = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'];

/** Every capability the node's kernel (6.12) knows, by number (lib/capability-names.ts). */
export const ALL_CAPABILITIES: readonly string[] = CAPABILITY_NAMES;

export { NEVER_GRANTED };

/** `NET_ADMIN` / `cap_net_admin` → `CAP_NET_ADMIN`. */
export function capName(c: string): string {
  const up = c.toUpperCase();
  return up.startsWith('CAP_') ? up : `CAP_${up}`;
}

/**
 * The container's capability set: the profile's base, plus add, minus drop (`ALL` drops all).
 * `bounding` (capability numbers) is what the runtime itself may grant, as containerd's
 * WithAllCurrentCapabilities: runc fails to start a container asking for more.
 */
export function containerCapabilities(run: Pick<ContainerRunSpec, 'profile' | 'capabilities'>, bounding?: ReadonlySet<number>): string[] {
  const grantable = ALL_CAPABILITIES.filter((c, i) => !NEVER_GRANTED.includes(c) && (!bounding || bounding.has(i)));
  const set = new Set<string>(run.profile === 'privileged' ? grantable : []);
  const drop = run.capabilities.drop.map(capName);
  if (drop.includes('CAP_ALL')) set.clear();
  for (const c of drop) set.delete(c);
  for (const c of run.capabilities.add.map(capName)) {
    if (c === 'CAP_ALL') throw new Error('capabilities.add does not accept ALL, use profile: privileged instead');
    if (!ALL_CAPABILITIES.includes(c)) throw new Error(`unknown capability ${c}`);
    if (NEVER_GRANTED.includes(c)) throw new Error(`${c} is never granted to a container`);
    if (bounding && !bounding.has(ALL_CAPABILITIES.indexOf(c))) throw new Error(`${c} is not in the node's bounding set`);
    set.add(c);
  }
  // In the kernel's order, so that equal sets give equal specs (and equal document hashes).
  return ALL_CAPABILITIES.filter((c) => set.has(c));
}

/** `env` with `over` applied: a KEY=value replaces the same KEY, else is appended (containerd's replaceOrAppendEnvValues). */
export function mergeEnv(base: readonly string[], over: readonly string[]): string[] {
  const out = [...base];
  const key = (kv: string) => (kv.includes('=') ? kv.slice(0, kv.indexOf('=')) : kv);
  for (const kv of over) {
    const i = out.findIndex((e) => key(e) === key(kv));
    if (i >= 0) out[i] = kv;
    else out.push(kv);
  }
  return out;
}

/**
 * The process's argv, Docker's rules: `entrypoint` replaces the image's ENTRYPOINT and clears its
 * CMD; `args` replaces CMD; what is left is ENTRYPOINT followed by CMD.
 */
export function processArgs(run: Pick<ContainerRunSpec, 'entrypoint' | 'args'>, image: ImageConfig): string[] {
  const entrypoint = run.entrypoint?.length ? run.entrypoint : (image.Entrypoint ?? []);
  const cmd = run.args?.length ? run.args : run.entrypoint?.length ? [] : (image.Cmd ?? []);
  const argv = [...entrypoint, ...cmd];
  if (argv.length === 0) throw new Error('no command: the image has no Entrypoint or Cmd and the document gives none');
  return argv;
}

/** uid/gid from runAs, else the image's `User` (`uid`, `uid:gid`, `name`, `name:group`). */
export function processUser(run: Pick<ContainerRunSpec, 'runAs'>, image: ImageConfig, resolve?: SpecContext['resolveUser']): { uid: number; gid: number } {
  let uid = 0;
  let gid = 0;
  const user = image.User?.trim();
  if (user) {
    const [u = '', g] = user.split(':');
    if (/^\d+$/.test(u)) uid = Number(u);
    else {
      const found = resolve?.(u);
      if (!found) throw new Error(`the image's user ${JSON.stringify(u)} is a name Bronze cannot resolve: set runAs.uid`);
      uid = found.uid;
      gid = found.gid;
    }
    if (g !== undefined) {
      if (!/^\d+$/.test(g)) throw new Error(`the image's group ${JSON.stringify(g)} is a name Bronze cannot resolve: set runAs.gid`);
      gid = Number(g);
    }
  }
  if (run.runAs?.uid !== undefined) {
    uid = run.runAs.uid;
    // A uid without a gid: group 0, as Docker's `--user 1000` without /etc/passwd.
    if (run.runAs.gid === undefined) gid = 0;
  }
  if (run.runAs?.gid !== undefined) gid = run.runAs.gid;
  return { uid, gid };
}

/** containerd's default mounts (oci/spec.go defaultMounts) plus the cgroup filesystem. */
function defaultMounts(privileged: boolean): OciMount[] {
  const ro = privileged ? [] : ['ro'];
  return [
    { destination: '/proc', type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] },
    { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
    { destination: '/dev/pts', type: 'devpts', source: 'devpts', options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'] },
    { destination: '/dev/shm', type: 'tmpfs', source: 'shm', options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'] },
    { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: ['nosuid', 'noexec', 'nodev'] },
    { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', ...ro] },
    { destination: '/sys/fs/cgroup', type: 'cgroup', source: 'cgroup', options: ['nosuid', 'noexec', 'nodev', 'relatime', ...ro] },
    { destination: '/run', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
  ];
}

/** containerd's masked and read-only paths (oci/spec.go populateDefaultUnixSpec). */
export const MASKED_PATHS: readonly string[] = [
  '/proc/acpi', '/proc/asound', '/proc/kcore', '/proc/keys', '/proc/latency_stats', '/proc/timer_list',
  '/proc/timer_stats', '/proc/sched_debug', '/sys/firmware', '/proc/scsi',
  // Added in later containerd releases (CVE-2020-8694, RAPL energy counters readable by anyone).
  '/sys/devices/virtual/powercap',
];
export const READONLY_PATHS: readonly string[] = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

/** Deny every device, then allow the standard character devices (containerd's WithDefaultUnixDevices). */
export function defaultDeviceRules(): OciDeviceRule[] {
  const c = (major: number, minor?: number): OciDeviceRule => (minor === undefined ? { allow: true, type: 'c', major, access: 'rwm' } : { allow: true, type: 'c', major, minor, access: 'rwm' });
  return [
    { allow: false, access: 'rwm' },
    c(1, 3), // /dev/null
    c(1, 8), // /dev/random
    c(1, 7), // /dev/full
    c(5, 0), // /dev/tty
    c(1, 5), // /dev/zero
    c(1, 9), // /dev/urandom
    c(5, 1), // /dev/console
    c(136), // /dev/pts/*
    c(5, 2), // /dev/ptmx
  ];
}

/** One of the document's mounts as an OCI mount. */
export function ociMount(m: RunMount): OciMount {
  if (!m.destination.startsWith('/')) throw new Error(`mount destination ${m.destination} is not absolute`);
  if (m.type === 'tmpfs') {
    const opts = m.options.filter((o) => o !== 'rw');
    for (const o of ['nosuid', 'nodev']) if (!opts.includes(o)) opts.unshift(o);
    return { destination: m.destination, type: 'tmpfs', source: 'tmpfs', options: opts };
  }
  if (!m.source?.startsWith('/')) throw new Error(`bind mount to ${m.destination} needs an absolute host source`);
  const opts = [...m.options];
  if (!opts.includes('bind') && !opts.includes('rbind')) opts.unshift('rbind');
  // A host path is never a way back into the host's mount tree: propagation stays private.
  if (!opts.some((o) => /^r?(shared|slave|private|unbindable)$/.test(o))) opts.push('rprivate');
  return { destination: m.destination, type: 'bind', source: m.source, options: opts };
}

/** cpu.max from millicores: quota per CPU_PERIOD_US (1000m = one CPU = quota == period). */
export function cpuMax(millis: number): { quota: number; period: number } {
  if (!Number.isInteger(millis) || millis <= 0) throw new Error(`cpu limit ${millis}m is not a positive number of millicores`);
  // The kernel refuses a quota under 1 ms.
  return { quota: Math.max(1000, Math.round((millis * CPU_PERIOD_US) / 1000)), period: CPU_PERIOD_US };
}

/** The OCI runtime spec for `run`, whose image has the config `image`. */
export function buildSpec(run: ContainerRunSpec, image: ImageConfig, ctx: SpecContext): OciSpec {
  const privileged = run.profile === 'privileged';
  const caps = containerCapabilities(run, ctx.bounding);
  const user = processUser(run, image, ctx.resolveUser);
  const baseEnv = image.Env?.length ? image.Env : DEFAULT_ENV;
  const env = mergeEnv(baseEnv, run.environment);
  const cwd = run.workingDir || image.WorkingDir || '/';
  if (!cwd.startsWith('/')) throw new Error(`working directory ${cwd} is not absolute`);

  const namespaces: { type: string }[] = [{ type: 'pid' }, { type: 'ipc' }, { type: 'mount' }];
  // `host` shares the node's network and, as Docker's --net=host, its hostname; `none` gets a
  // network namespace of its own with only a loopback (runc brings `lo` up).
  if (run.network !== 'host') namespaces.push({ type: 'uts' }, { type: 'network' });

  const mounts = defaultMounts(privileged);
  // A container on the node's network resolves names as the node does (Docker's --net=host too).
  if (run.network === 'host') for (const f of ctx.hostEtcFiles ?? []) mounts.push({ destination: f.destination, type: 'bind', source: f.source, options: ['rbind', 'ro', 'rprivate'] });
  for (const m of run.mounts) {
    const om = ociMount(m);
    // A document's mount at a default's place replaces it (as containerd's WithMounts does).
    const i = mounts.findIndex((d) => d.destination === om.destination);
    if (i >= 0) mounts.splice(i, 1);
    mounts.push(om);
  }

  const resources: OciSpec['linux']['resources'] = {
    devices: privileged ? [{ allow: true, access: 'rwm' }] : defaultDeviceRules(),
    pids: { limit: DEFAULT_PIDS_LIMIT },
  };
  if (run.limits.memoryBytes !== undefined) {
    if (!Number.isSafeInteger(run.limits.memoryBytes) || run.limits.memoryBytes <= 0) throw new Error(`memory limit ${run.limits.memoryBytes} is not a positive number of bytes`);
    resources.memory = { limit: run.limits.memoryBytes };
  }
  if (run.limits.cpuMillis !== undefined) resources.cpu = cpuMax(run.limits.cpuMillis);

  // A non-root process keeps its granted capabilities across exec only as ambient ones.
  const ambient = user.uid === 0 ? [] : caps;
  const spec: OciSpec = {
    ociVersion: OCI_VERSION,
    process: {
      terminal: false,
      user,
      args: processArgs(run, image),
      env,
      cwd,
      capabilities: { bounding: caps, effective: caps, permitted: caps, inheritable: ambient, ambient },
      rlimits: [{ type: 'RLIMIT_NOFILE', hard: (ctx.nofile ?? DEFAULT_NOFILE).hard, soft: (ctx.nofile ?? DEFAULT_NOFILE).soft }],
      noNewPrivileges: !privileged,
      // Else the container inherits the shim's score, which is containerd's (-999): in a node-wide
      // OOM the operator's workloads go first, before any part of the node (machined/cgroups.ts).
      oomScoreAdj: CONTAINER_OOM_SCORE_ADJ,
    },
    root: { path: 'rootfs', readonly: !privileged },
    mounts,
    linux: {
      namespaces,
      cgroupsPath: `${ctx.cgroupParent ?? CONTAINERS_CGROUP_PARENT}/${run.name}`,
      resources,
    },
  };
  if (run.network !== 'host') spec.hostname = run.name;
  if (privileged) {
    spec.linux.devices = (ctx.hostDevices ?? []).map((d) => ({ ...d }));
  } else {
    spec.linux.maskedPaths = [...MASKED_PATHS];
    spec.linux.readonlyPaths = [...READONLY_PATHS];
    spec.linux.seccomp = ociSeccomp({ arch: ctx.arch ?? goArch(), caps, ...(ctx.kernel ? { kernel: ctx.kernel } : {}) });
  }
  return spec;
}
