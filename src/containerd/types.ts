// The shapes machined's workload controller hands to the containerd layer (src/containerd/) and
// gets back: what to run, and what runs. Data only; no imports, so the config layer, machined
// and the runtime can all name them.

/** containerd namespace of the operator's containers, as Talos's (`taloscontainers`). */
export const CONTAINERS_NAMESPACE = 'taloscontainers';
/** containerd namespace of Bronze's own use (none yet beyond images pulled for it). */
export const SYSTEM_NAMESPACE = 'system';
/** containerd's socket on a node (Talos's path). */
export const CONTAINERD_SOCKET = '/system/run/containerd/containerd.sock';

/** A registry host's settings, from `machine.registries` / `RegistryMirrorConfig`. */
export interface RegistryHostConfig {
  /** Endpoints to try in order (`https://mirror:5000`, `http://10.0.2.2:5000`); the upstream host last unless overridePath/skipFallback. */
  endpoints: string[];
  skipFallback?: boolean;
  auth?: { username?: string; password?: string; auth?: string; identityToken?: string };
  tls?: { ca?: string; clientCert?: string; clientKey?: string; insecureSkipVerify?: boolean };
}
/** Registry settings by host name (`docker.io`, `10.0.2.2:5000`, `*`). */
export type RegistryConfig = Record<string, RegistryHostConfig>;

/** One mount of a container, resolved by the controller (paths on the host already checked). */
export interface RunMount {
  type: 'tmpfs' | 'bind';
  destination: string;
  /** Host path (bind) */
  source?: string;
  /** Mount options as in OCI (`ro`, `size=64m`, `mode=1777`, `rbind`, ...). */
  options: string[];
}

/** Everything needed to run one container, resolved from a ContainerConfig document. */
export interface ContainerRunSpec {
  /** The document's name: the containerd container id and log identifier. */
  name: string;
  /** The normalized image reference (`10.0.2.2:5000/busybox:1`). */
  image: string;
  entrypoint?: string[];
  args?: string[];
  workingDir?: string;
  runAs?: { uid?: number; gid?: number };
  /** KEY=value, merged over the image's own Env. */
  environment: string[];
  mounts: RunMount[];
  /** `restricted` (default): no new privileges, default seccomp, default capability set, read-only rootfs. */
  profile: 'restricted' | 'privileged';
  capabilities: { add: string[]; drop: string[] };
  network: 'none' | 'host';
  /** cpu in millicores (cpu.max), memory in bytes (memory.max). */
  limits: { cpuMillis?: number; memoryBytes?: number };
}

/** What an image pull reports as it goes. */
export interface PullProgress {
  /** Digest of the blob being fetched, or '' for the manifest stage. */
  digest: string;
  /** Bytes received so far and expected, for this blob. */
  offset: number;
  total: number;
  done: boolean;
}

/** An image in containerd's store, as the ImageService lists it. */
export interface ImageInfo {
  name: string;
  digest: string;
  size: number;
  createdAt: Date;
}

/** A running (or stopped) container instance, as the runtime sees it. */
export interface InstanceInfo {
  id: string;
  namespace: string;
  image: string;
  pid: number;
  status: 'created' | 'running' | 'stopped' | 'paused' | 'unknown';
  exitStatus?: number;
  /** cgroup path relative to /sys/fs/cgroup. */
  cgroup: string;
  labels: Record<string, string>;
}

/** Figures read from a container's cgroup (Talos's ContainerStats message fields). */
export interface InstanceStats {
  id: string;
  namespace: string;
  memoryUsage: number;
  cpuUsageNanos: number;
}

/**
 * What machined's container and image API handlers (src/machined/api/containers.ts,
 * src/machined/api/images.ts) ask of the node's container runtime. machined implements it over
 * containerd (src/containerd/); the handlers' tests use an in-memory one.
 */
export interface WorkloadsApi {
  listImages(namespace: string): Promise<ImageInfo[]>;
  /** Pulls `ref` (honouring the registry config), reporting progress; resolves with the stored image. */
  pullImage(namespace: string, ref: string, onProgress?: (p: PullProgress) => void): Promise<ImageInfo>;
  /** Imports an OCI image archive (tar, optionally gzip) streamed in; resolves with the images it named. */
  importImage(namespace: string, archive: AsyncIterable<Uint8Array>): Promise<ImageInfo[]>;
  removeImage(namespace: string, ref: string): Promise<void>;
  listContainers(namespace: string): Promise<InstanceInfo[]>;
  stats(namespace: string): Promise<InstanceStats[]>;
  /** A container's log: the last `tailLines` lines (-1: all), then, with follow, what it writes next. */
  logs(namespace: string, id: string, opts: { follow: boolean; tailLines: number; signal?: AbortSignal }): AsyncIterable<Uint8Array>;
  /** Stops the container's task and starts a new one (a new instance, same container). */
  restart(namespace: string, id: string): Promise<void>;
}
