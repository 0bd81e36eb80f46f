// A task's cgroup figures from containerd's Tasks.Metrics reply: the `data` Any holds
// io.containerd.cgroups.v2.Metrics on a cgroup v2 node, io.containerd.cgroups.v1.Metrics on a
// v1 (or hybrid) host.
//
// Decoded by hand, walking the protobuf wire format for the two fields Bronze reports (memory
// usage and CPU time): the v1 message is not among the protos compiled into the binary
// (image-builder/containerd-protos.ts keeps to what a node uses), yet the integration tests run
// on v1 hosts; one small walker reads both without carrying 200 fields of message definitions.
import protobuf from 'protobufjs/light.js';

export const CGROUPS_V1_METRICS = 'io.containerd.cgroups.v1.Metrics';
export const CGROUPS_V2_METRICS = 'io.containerd.cgroups.v2.Metrics';

export interface CgroupFigures {
  /** Bytes the cgroup uses (memory.current; v1: memory.usage_in_bytes). */
  memoryUsage: number;
  /** CPU time used, in nanoseconds (v2: usage_usec × 1000; v1: cpuacct.usage). */
  cpuUsageNanos: number;
}

/** Field paths, as field numbers from the outer message inward. */
const PATHS = {
  v2: { memory: [4, 32], cpu: [2, 1], cpuScale: 1000 }, // Metrics.memory(4).usage(32); Metrics.cpu(2).usage_usec(1)
  v1: { memory: [4, 33, 2], cpu: [3, 1, 1], cpuScale: 1 }, // memory(4).usage(33).usage(2); cpu(3).usage(1).total(1)
} as const;

/** The varint at `path` inside the message `buf` (0 when absent); the last field read wins, as protobuf merges. */
export function readVarintPath(buf: Uint8Array, path: readonly number[]): number {
  const [field, ...rest] = path;
  if (field === undefined) return 0;
  const r = protobuf.Reader.create(buf);
  let found = 0;
  while (r.pos < r.len) {
    const tag = r.uint32();
    const num = tag >>> 3;
    const wire = tag & 7;
    if (num === field && rest.length === 0 && wire === 0) {
      found = Number(String(r.uint64()));
    } else if (num === field && rest.length > 0 && wire === 2) {
      const sub = r.bytes();
      const v = readVarintPath(sub, rest);
      if (v !== 0) found = v;
    } else {
      r.skipType(wire);
    }
  }
  return found;
}

/** Memory and CPU figures of a Metrics Any; undefined for a type Bronze does not know. */
export function decodeCgroupMetrics(any: { type_url: string; value: Uint8Array }): CgroupFigures | undefined {
  const type = any.type_url.slice(any.type_url.lastIndexOf('/') + 1);
  const p = type === CGROUPS_V2_METRICS ? PATHS.v2 : type === CGROUPS_V1_METRICS ? PATHS.v1 : undefined;
  if (!p) return undefined;
  return { memoryUsage: readVarintPath(any.value, p.memory), cpuUsageNanos: readVarintPath(any.value, p.cpu) * p.cpuScale };
}
