// Names for the API's messages that callers use often, taken from the types generated from
// protos/ (src/contract/wire/, made at build time by image-builder/wire-types.ts), so they cannot
// drift from the protos. Any other message: `RpcReply<'/pkg.Service/Method'>` and `RpcRequest`
// (./rpc.ts), or its generated type. Replies are the `__Output` form (src/contract/protos.ts's
// conversions: field names as in the .proto, 64-bit integers as decimal strings, enums as their
// names, bytes as Buffers, unset message fields as null); requests the permissive input form.
import type { Any__Output } from '../contract/wire/google/protobuf/Any.ts';
import type { Timestamp__Output } from '../contract/wire/google/protobuf/Timestamp.ts';
import type { Metadata__Output } from '../contract/wire/common/Metadata.ts';
import type { Resource__Output } from '../contract/wire/cosi/resource/Resource.ts';
import type { EventType__Output } from '../contract/wire/cosi/resource/EventType.ts';
import type { ConnectRecord__Output } from '../contract/wire/machine/ConnectRecord.ts';
import type { NetstatRequest } from '../contract/wire/machine/NetstatRequest.ts';
import type { _machine_ApplyConfigurationRequest_Mode__Output } from '../contract/wire/machine/ApplyConfigurationRequest.ts';
import type { _machine_ListRequest_Type__Output } from '../contract/wire/machine/ListRequest.ts';
import type { ApplyConfiguration__Output } from '../contract/wire/machine/ApplyConfiguration.ts';
import type { MemInfo__Output } from '../contract/wire/machine/MemInfo.ts';
import type { Progress__Output } from '../contract/wire/machine/Progress.ts';
import type { ProcessInfo__Output } from '../contract/wire/machine/ProcessInfo.ts';
import type { ServiceInfo__Output } from '../contract/wire/machine/ServiceInfo.ts';
import type { VersionInfo__Output } from '../contract/wire/machine/VersionInfo.ts';

export type Timestamp = Timestamp__Output;

/** common.Metadata: field 1 of every per-node reply item and streamed message. */
export type NodeMetadata = Metadata__Output;

/** A reply item: its node's metadata, and the rest unset when that node failed. */
export interface Item {
  metadata?: NodeMetadata | null;
}

export interface Envelope<T extends Item> {
  messages: T[];
}

export type VersionInfo = VersionInfo__Output;
export type MemInfo = MemInfo__Output;
export type ProcessInfo = ProcessInfo__Output;
export type ServiceInfo = ServiceInfo__Output;
export type ApplyConfiguration = ApplyConfiguration__Output;
export type ApplyMode = _machine_ApplyConfigurationRequest_Mode__Output;
export type FileType = _machine_ListRequest_Type__Output;
/** One step of an install or upgrade. done and total: bytes (or steps), "0" when unknown. */
export type Progress = Progress__Output;
export type ConnectRecord = ConnectRecord__Output;
export type { NetstatRequest };
export type AnyMessage = Any__Output;
export type WireResource = Resource__Output;
export type WatchEventType = EventType__Output;

export function timestampToDate(ts: Timestamp | null | undefined): Date | undefined {
  if (!ts) return undefined;
  const s = Number(ts.seconds);
  if (s === 0 && !ts.nanos) return undefined;
  return new Date(s * 1000 + Math.floor((ts.nanos ?? 0) / 1e6));
}
