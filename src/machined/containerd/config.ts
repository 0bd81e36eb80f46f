// containerd's config.toml (version 2, containerd 1.6), as machined writes it before every
// start: where it keeps its data (root, on EPHEMERAL) and its state (state, tmpfs), the socket
// it serves (Talos's /system/run/containerd/containerd.sock), and the plugins it leaves out.
//
// Bronze drives containerd through its own gRPC API, without Kubernetes: no CRI plugin, and none
// of the snapshotters, runtimes and helpers a node never uses, so that it starts quicker and
// holds less memory. What stays: the metadata and content stores, the overlayfs snapshotter, the
// walking differ, garbage collection, the v2 task runtime (the runc v2 shim), events, leases,
// and their gRPC services (health, version and introspection among them).
//
// The runtime and the snapshotter are chosen by the client per container in containerd 1.6 (the
// CRI plugin's runtime settings, SystemdCgroup included, apply to CRI's containers alone):
// Bronze's client names them (src/containerd/runtime.ts RUNC_RUNTIME, the runc v2 shim, and
// SNAPSHOTTER, overlayfs), and runc's options default to cgroupfs cgroups (no systemd on a
// node), with each container's cgroup path in its spec (src/containerd/spec.ts, under the
// parent src/machined/cgroups.ts makes).

/**
 * Plugins off (containerd 1.6.20's plugin ids). CRI: Kubernetes' API, the largest of them. The
 * other snapshotters: aufs, btrfs, zfs and devmapper need what a node does not have; native
 * copies whole trees. monitor.v1.cgroups:
 * Prometheus metrics (no metrics address). internal.v1.opt: wants /opt/containerd on the
 * read-only root. internal.v1.restart: containerd's own restart manager (machined restarts
 * containers). tracing: OpenTelemetry exporters.
 */
export const DISABLED_PLUGINS: readonly string[] = [
  'io.containerd.grpc.v1.cri',
  'io.containerd.snapshotter.v1.aufs',
  'io.containerd.snapshotter.v1.btrfs',
  'io.containerd.snapshotter.v1.devmapper',
  'io.containerd.snapshotter.v1.native',
  'io.containerd.snapshotter.v1.zfs',
  'io.containerd.monitor.v1.cgroups',
  'io.containerd.internal.v1.opt',
  'io.containerd.internal.v1.restart',
  'io.containerd.internal.v1.tracing',
  'io.containerd.tracing.processor.v1.otlp',
];

/**
 * Without these containerd refuses to start, instead of serving a store that cannot run
 * anything. (In 1.6 the tasks service needs the v1 runtime plugin loaded too, although only the
 * v2 shims run: runtime.v1.linux stays on; checked with containerd 1.6.20, whose tasks service
 * fails "no plugins registered for io.containerd.runtime.v1" without it.)
 */
export const REQUIRED_PLUGINS: readonly string[] = ['io.containerd.snapshotter.v1.overlayfs', 'io.containerd.runtime.v2.task', 'io.containerd.grpc.v1.tasks'];

export interface ContainerdConfig {
  /** Images, content, snapshots (EPHEMERAL: /var/lib/containerd). */
  root: string;
  /** Sockets, shims' state, mounts of running containers (tmpfs: /system/run/containerd). */
  state: string;
  /** The gRPC socket. */
  address: string;
  /**
   * containerd's log level. Default warn: its output is the service's log, which machined also
   * writes to the console, and at info it says ~35 lines at every start (one per plugin).
   */
  logLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error';
}

const str = (s: string) => JSON.stringify(s); // a TOML basic string is a JSON string for these values
const list = (xs: readonly string[]) => `[\n${xs.map((x) => `  ${str(x)},`).join('\n')}\n]`;

export function containerdConfigToml(c: ContainerdConfig): string {
  return [
    '# Written by machined at every start of containerd (src/machined/containerd/config.ts).',
    'version = 2',
    `root = ${str(c.root)}`,
    `state = ${str(c.state)}`,
    `disabled_plugins = ${list(DISABLED_PLUGINS)}`,
    `required_plugins = ${list(REQUIRED_PLUGINS)}`,
    '',
    '[grpc]',
    `  address = ${str(c.address)}`,
    '  uid = 0',
    '  gid = 0',
    '',
    // The shims' ttrpc socket is derived from the address; no TCP listener, no debug socket, no metrics.
    '[debug]',
    '  address = ""',
    `  level = ${str(c.logLevel ?? 'warn')}`,
    '',
    '[metrics]',
    '  address = ""',
    '',
    '[plugins]',
    '  [plugins."io.containerd.gc.v1.scheduler"]',
    // Talos's and containerd's defaults, spelt out: collect after 100 changes, pausing at most 2%.
    '    pause_threshold = 0.02',
    '    deletion_threshold = 0',
    '    mutation_threshold = 100',
    '    schedule_delay = "0s"',
    '    startup_delay = "100ms"',
    '',
  ].join('\n');
}
