// The messages of the API as the client hands them over: the types generated from protos/
// (src/contract/wire/, made at build time by image-builder/wire-types.ts), so they cannot drift
// from the protos. Replies are the `__Output` form (src/contract/protos.ts's conversions: field
// names as in the .proto, 64-bit integers as decimal strings, enums as their names, bytes as
// Buffers, unset message fields as null); requests the permissive input form.
import type { Any__Output } from '../contract/wire/google/protobuf/Any.ts';
import type { Duration } from '../contract/wire/google/protobuf/Duration.ts';
import type { Timestamp__Output } from '../contract/wire/google/protobuf/Timestamp.ts';
import type { Status__Output } from '../contract/wire/google/rpc/Status.ts';
import type { Metadata__Output } from '../contract/wire/common/Metadata.ts';
import type { Data__Output } from '../contract/wire/common/Data.ts';
import type { ApplyConfiguration__Output } from '../contract/wire/machine/ApplyConfiguration.ts';
import type { ApplyConfigurationRequest, _machine_ApplyConfigurationRequest_Mode__Output } from '../contract/wire/machine/ApplyConfigurationRequest.ts';
import type { DmesgRequest } from '../contract/wire/machine/DmesgRequest.ts';
import type { Event__Output as MachineEventOut } from '../contract/wire/machine/Event.ts';
import type { EventsRequest } from '../contract/wire/machine/EventsRequest.ts';
import type { FileInfo__Output } from '../contract/wire/machine/FileInfo.ts';
import type { GenerateClientConfiguration__Output } from '../contract/wire/machine/GenerateClientConfiguration.ts';
import type { Hostname__Output } from '../contract/wire/machine/Hostname.ts';
import type { InstallRequest } from '../contract/wire/machine/InstallRequest.ts';
import type { ListRequest, _machine_ListRequest_Type__Output } from '../contract/wire/machine/ListRequest.ts';
import type { LogsRequest } from '../contract/wire/machine/LogsRequest.ts';
import type { MemInfo__Output } from '../contract/wire/machine/MemInfo.ts';
import type { Memory__Output } from '../contract/wire/machine/Memory.ts';
import type { MountStat__Output } from '../contract/wire/machine/MountStat.ts';
import type { Mounts__Output } from '../contract/wire/machine/Mounts.ts';
import type { Process__Output } from '../contract/wire/machine/Process.ts';
import type { ProcessInfo__Output } from '../contract/wire/machine/ProcessInfo.ts';
import type { Progress__Output } from '../contract/wire/machine/Progress.ts';
import type { Reboot__Output } from '../contract/wire/machine/Reboot.ts';
import type { Reset__Output } from '../contract/wire/machine/Reset.ts';
import type { ResetRequest } from '../contract/wire/machine/ResetRequest.ts';
import type { Rollback__Output } from '../contract/wire/machine/Rollback.ts';
import type { ServiceInfo__Output } from '../contract/wire/machine/ServiceInfo.ts';
import type { ServiceList__Output } from '../contract/wire/machine/ServiceList.ts';
import type { ServiceStart__Output } from '../contract/wire/machine/ServiceStart.ts';
import type { Shutdown__Output } from '../contract/wire/machine/Shutdown.ts';
import type { Upgrade__Output } from '../contract/wire/machine/Upgrade.ts';
import type { UpgradeRequest, _machine_UpgradeRequest_RebootMode__Output } from '../contract/wire/machine/UpgradeRequest.ts';
import type { UpgradeStreamRequest } from '../contract/wire/machine/UpgradeStreamRequest.ts';
import type { RepairRequest } from '../contract/wire/machine/RepairRequest.ts';
import type { Version__Output } from '../contract/wire/machine/Version.ts';
import type { VersionInfo__Output } from '../contract/wire/machine/VersionInfo.ts';
import type { Time__Output } from '../contract/wire/time/Time.ts';
import type { Resource__Output } from '../contract/wire/cosi/resource/Resource.ts';
import type { Metadata__Output as ResourceMetadataOut } from '../contract/wire/cosi/resource/Metadata.ts';
import type { Event__Output as WatchEventOut } from '../contract/wire/cosi/resource/Event.ts';
import type { EventType__Output } from '../contract/wire/cosi/resource/EventType.ts';
import type { WatchRequest as WatchRequestIn } from '../contract/wire/cosi/resource/WatchRequest.ts';

export type Timestamp = Timestamp__Output;
export type { Duration };
export type RpcStatus = Status__Output;

/** common.Metadata: field 1 of every per-node reply item and streamed message. */
export type NodeMetadata = Metadata__Output;

/** A reply item: its node's metadata, and the rest unset when that node failed. */
export interface Item {
  metadata?: NodeMetadata | null;
}

export interface Envelope<T extends Item> {
  messages: T[];
}

// ---- machine.MachineService ----

export type VersionInfo = VersionInfo__Output;
export type Version = Version__Output;
export type MemInfo = MemInfo__Output;
export type Memory = Memory__Output;
export type MountStat = MountStat__Output;
export type Mounts = Mounts__Output;
export type ProcessInfo = ProcessInfo__Output;
export type Processes = Process__Output;
export type ServiceInfo = ServiceInfo__Output;
export type ServiceList = ServiceList__Output;
/** ServiceStart, ServiceStop and ServiceRestart reply alike ({ resp }). */
export type ServiceAction = ServiceStart__Output;
export type Reboot = Reboot__Output;
export type Shutdown = Shutdown__Output;
export type RebootMode = _machine_UpgradeRequest_RebootMode__Output;
export type GenerateClientConfiguration = GenerateClientConfiguration__Output;
export type ApplyMode = _machine_ApplyConfigurationRequest_Mode__Output;
export type { ApplyConfigurationRequest, UpgradeRequest, UpgradeStreamRequest, InstallRequest, RepairRequest, ResetRequest, LogsRequest, DmesgRequest, EventsRequest, ListRequest };
export type ApplyConfiguration = ApplyConfiguration__Output;
export type Upgrade = Upgrade__Output;
/** One step of an install or upgrade. done and total: bytes (or steps), "0" when unknown. */
export type Progress = Progress__Output;
export type Reset = Reset__Output;
export type Rollback = Rollback__Output;
export type Hostname = Hostname__Output;
/** common.Data: a chunk of a byte stream (logs, dmesg, file contents). */
export type Data = Data__Output;
export type AnyMessage = Any__Output;
export type MachineEvent = MachineEventOut;
export type FileType = _machine_ListRequest_Type__Output;
export type FileInfo = FileInfo__Output;

// ---- time.TimeService ----

export type Time = Time__Output;

// ---- cosi.resource.State ----

export type ResourceMetadata = ResourceMetadataOut;
export type WireResource = Resource__Output;
export type WatchEventType = EventType__Output;
export type WatchEvent = WatchEventOut;
export type WatchRequest = WatchRequestIn;

export function timestampToDate(ts: Timestamp | null | undefined): Date | undefined {
  if (!ts) return undefined;
  const s = Number(ts.seconds);
  if (s === 0 && !ts.nanos) return undefined;
  return new Date(s * 1000 + Math.floor((ts.nanos ?? 0) / 1e6));
}

// ---- The read API: Copy, DiskUsage, PacketCapture, CPUFreqStats, Netstat, Containers, Stats ----

export interface DiskUsageRequest {
  recursion_depth?: number;
  all?: boolean;
  threshold?: number;
  paths: string[];
}

export interface DiskUsageInfo extends Item {
  name: string;
  /** int64, as a decimal string. */
  size: string;
  error: string;
  relative_name: string;
}

export interface BPFInstruction {
  op: number;
  jt: number;
  jf: number;
  k: number;
}

export interface PacketCaptureRequest {
  interface: string;
  promiscuous?: boolean;
  snap_len?: number;
  bpf_filter?: BPFInstruction[];
}

export interface CPUFreqStat {
  current_frequency: string;
  minimum_frequency: string;
  maximum_frequency: string;
  governor: string;
}

export interface CPUsFreqStats extends Item {
  cpu_freq_stats: CPUFreqStat[];
}

export type L4Proto = 'tcp' | 'tcp6' | 'udp' | 'udp6' | 'udplite' | 'udplite6' | 'raw' | 'raw6';

export interface NetstatRequest {
  filter: 'ALL' | 'CONNECTED' | 'LISTENING';
  feature?: { pid?: boolean };
  l4proto: Partial<Record<L4Proto, boolean>>;
  netns?: { hostnetwork?: boolean; netns?: string[]; allnetns?: boolean };
}

export interface ConnectRecord {
  l4proto: string;
  localip: string;
  localport: number;
  remoteip: string;
  remoteport: number;
  state: string;
  txqueue: string;
  rxqueue: string;
  tr: string;
  timerwhen: string;
  retrnsmt: string;
  uid: number;
  timeout: string;
  inode: string;
  ref: string;
  pointer: string;
  process: { pid: number; name: string } | null;
  netns: string;
}

export interface Netstat extends Item {
  connectrecord: ConnectRecord[];
}

export interface ContainersRequest {
  namespace?: string;
  driver?: 'CONTAINERD' | 'CRI';
}

export interface ContainerInfo {
  namespace: string;
  id: string;
  image: string;
  pid: number;
  status: string;
  pod_id: string;
  name: string;
  network_namespace: string;
}

export interface Containers extends Item {
  containers: ContainerInfo[];
}

export interface ContainerStat {
  namespace: string;
  id: string;
  memory_usage: string;
  cpu_usage: string;
  pod_id: string;
  name: string;
}

export interface ContainerStats extends Item {
  stats: ContainerStat[];
}
