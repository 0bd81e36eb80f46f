// The messages of the API as @grpc/proto-loader hands them over with the contract's loader options
// (src/contract/protos.ts: field names as in the .proto, 64-bit integers as decimal strings,
// enums as their names, bytes as Buffers, unset message fields as null). Only the RPCs the client
// wraps are typed; see protos/ for the field comments.

export interface Timestamp {
  seconds: string | number;
  nanos: number;
}

export interface Duration {
  seconds: string | number;
  nanos?: number;
}

export interface RpcStatus {
  code: number;
  message: string;
}

/** common.Metadata: field 1 of every per-node reply item and streamed message. */
export interface NodeMetadata {
  hostname: string;
  error: string;
  status?: RpcStatus | null;
}

/** A reply item: its node's metadata, and the rest unset when that node failed. */
export interface Item {
  metadata?: NodeMetadata | null;
}

export interface Envelope<T extends Item> {
  messages: T[];
}

// ---- machine.MachineService ----

export interface VersionInfo {
  tag: string;
  sha: string;
  built: string;
  go_version: string;
  os: string;
  arch: string;
}

export interface Version extends Item {
  version: VersionInfo | null;
  platform: { name: string; mode: string } | null;
  features: { rbac: boolean } | null;
}

export interface MemInfo {
  memtotal: string;
  memfree: string;
  memavailable: string;
  buffers: string;
  cached: string;
  shmem: string;
  [field: string]: string;
}

export interface Memory extends Item {
  meminfo: MemInfo | null;
}

export interface MountStat {
  filesystem: string;
  size: string;
  available: string;
  mounted_on: string;
}

export interface Mounts extends Item {
  stats: MountStat[];
}

export interface ProcessInfo {
  pid: number;
  ppid: number;
  state: string;
  threads: number;
  cpu_time: number;
  virtual_memory: string;
  resident_memory: string;
  command: string;
  executable: string;
  args: string;
}

export interface Processes extends Item {
  processes: ProcessInfo[];
}

export interface ServiceEvent {
  msg: string;
  state: string;
  ts: Timestamp | null;
}

export interface ServiceHealth {
  unknown: boolean;
  healthy: boolean;
  last_message: string;
  last_change: Timestamp | null;
}

export interface ServiceInfo {
  id: string;
  state: string;
  events: { events: ServiceEvent[] } | null;
  health: ServiceHealth | null;
}

export interface ServiceList extends Item {
  services: ServiceInfo[];
}

export interface ServiceAction extends Item {
  resp: string;
}

export interface Reboot extends Item {
  actor_id: string;
}

export type Shutdown = Reboot;

export type RebootMode = 'DEFAULT' | 'POWERCYCLE';

export interface GenerateClientConfiguration extends Item {
  ca: Buffer;
  crt: Buffer;
  key: Buffer;
  talosconfig: Buffer;
}

export type ApplyMode = 'REBOOT' | 'AUTO' | 'NO_REBOOT' | 'STAGED' | 'TRY';

export interface ApplyConfigurationRequest {
  data: Buffer;
  mode?: ApplyMode;
  dry_run?: boolean;
  try_mode_timeout?: Duration;
}

export interface ApplyConfiguration extends Item {
  warnings: string[];
  mode: ApplyMode;
  mode_details: string;
}

export interface UpgradeRequest {
  /** A URL (http, https) the node fetches the image from; empty when the client sends it (UpgradeStream). */
  image: string;
  preserve?: boolean;
  stage?: boolean;
  force?: boolean;
  reboot_mode?: RebootMode;
}

export interface Upgrade extends Item {
  ack: string;
  actor_id: string;
}

/** One message of UpgradeStream: the first carries the request (and the size of an upload), the others the image's bytes. */
export interface UpgradeStreamRequest {
  request?: UpgradeRequest;
  size?: number;
  chunk?: Buffer;
}

export interface InstallRequest {
  disk: string;
  wipe?: boolean;
  /** Empty: the media the node booted from. */
  image?: string;
  extra_kernel_args?: string[];
}

export interface RepairRequest {
  /** STATE, EPHEMERAL. */
  labels: string[];
  zero_log?: boolean;
}

/** One step of an install, upgrade or repair. done and total: bytes (or steps), "0" when unknown. */
export interface Progress extends Item {
  stage: string;
  message: string;
  done: string;
  total: string;
}

export interface ResetRequest {
  graceful?: boolean;
  reboot?: boolean;
  system_partitions_to_wipe?: Array<{ label: string; wipe: boolean }>;
}

export type Reset = Reboot;

export type Rollback = Item;

export interface Hostname extends Item {
  hostname: string;
}

/** common.Data: a chunk of a byte stream (logs, dmesg, file contents). */
export interface Data extends Item {
  bytes: Buffer;
}

export interface LogsRequest {
  id: string;
  namespace?: string;
  follow?: boolean;
  /** -1: the whole log. */
  tail_lines?: number;
}

export interface DmesgRequest {
  follow?: boolean;
  tail?: boolean;
}

export interface EventsRequest {
  tail_events?: number;
  tail_id?: string;
  tail_seconds?: number;
  with_actor_id?: string;
}

export interface AnyMessage {
  type_url: string;
  value: Buffer;
}

export interface MachineEvent extends Item {
  data: AnyMessage | null;
  id: string;
  actor_id: string;
}

export type FileType = 'REGULAR' | 'DIRECTORY' | 'SYMLINK';

export interface ListRequest {
  root?: string;
  recurse?: boolean;
  recursion_depth?: number;
  types?: FileType[];
}

export interface FileInfo extends Item {
  name: string;
  size: string;
  mode: number;
  modified: string;
  is_dir: boolean;
  error: string;
  link: string;
  relative_name: string;
  uid: number;
  gid: number;
}

// ---- time.TimeService ----

export interface Time extends Item {
  server: string;
  localtime: Timestamp | null;
  remotetime: Timestamp | null;
}

// ---- cosi.resource.State ----

export interface ResourceMetadata {
  namespace: string;
  type: string;
  id: string;
  version: string;
  owner: string;
  phase: string;
  created: Timestamp | null;
  updated: Timestamp | null;
  finalizers: string[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface WireResource {
  metadata: ResourceMetadata | null;
  spec: { proto_spec: Buffer; yaml_spec: string } | null;
}

export type WatchEventType = 'CREATED' | 'UPDATED' | 'DESTROYED' | 'BOOTSTRAPPED' | 'ERRORED' | 'NOOP';

export interface WatchEvent {
  resource: WireResource | null;
  event_type: WatchEventType;
  old: WireResource | null;
  error?: string | null;
}

export interface WatchRequest {
  namespace: string;
  type: string;
  id?: string;
  options?: { bootstrap_contents?: boolean; tail_events?: number; aggregated?: boolean };
  api_version?: number;
}

export function timestampToDate(ts: Timestamp | null | undefined): Date | undefined {
  if (!ts) return undefined;
  const s = Number(ts.seconds);
  if (s === 0 && !ts.nanos) return undefined;
  return new Date(s * 1000 + Math.floor((ts.nanos ?? 0) / 1e6));
}
