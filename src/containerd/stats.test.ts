import { describe, expect, it } from 'vitest';
import { containerdType } from './client.ts';
import { decodeCgroupMetrics, readVarintPath } from './stats.ts';

// A tiny protobuf writer for the v1 message (not compiled into the binary's descriptor).
function varint(n: bigint): number[] {
  const out: number[] = [];
  do {
    let b = Number(n & 0x7fn);
    n >>= 7n;
    if (n > 0n) b |= 0x80;
    out.push(b);
  } while (n > 0n);
  return out;
}
const fieldVarint = (num: number, v: bigint) => [...varint(BigInt((num << 3) | 0)), ...varint(v)];
const fieldBytes = (num: number, b: number[]) => [...varint(BigInt((num << 3) | 2)), ...varint(BigInt(b.length)), ...b];

describe('cgroup metrics', () => {
  it('decodes v2 Metrics (memory.usage, cpu.usage_usec × 1000) as containerd encodes them', async () => {
    const t = await containerdType('io.containerd.cgroups.v2.Metrics');
    const value = t.encode(t.fromObject({ pids: { current: 3 }, cpu: { usage_usec: 1234, user_usec: 1000 }, memory: { anon: 5, usage: 8 * 1024 * 1024, usage_limit: 1 << 30 } })).finish();
    expect(decodeCgroupMetrics({ type_url: 'io.containerd.cgroups.v2.Metrics', value })).toEqual({ memoryUsage: 8388608, cpuUsageNanos: 1234000 });
  });

  it('decodes v1 Metrics (memory.usage.usage, cpu.usage.total)', () => {
    const mem = fieldBytes(4, [...fieldVarint(1, 7n), ...fieldBytes(33, [...fieldVarint(1, 99n), ...fieldVarint(2, 4096n)])]);
    const cpu = fieldBytes(3, fieldBytes(1, [...fieldVarint(1, 5_000_000_000n), ...fieldVarint(2, 1n)]));
    const pids = fieldBytes(2, fieldVarint(1, 2n));
    const value = Uint8Array.from([...pids, ...cpu, ...mem]);
    expect(decodeCgroupMetrics({ type_url: 'io.containerd.cgroups.v1.Metrics', value })).toEqual({ memoryUsage: 4096, cpuUsageNanos: 5_000_000_000 });
  });

  it('absent fields are 0; unknown types undefined', () => {
    expect(readVarintPath(new Uint8Array(), [4, 32])).toBe(0);
    expect(decodeCgroupMetrics({ type_url: 'x.Y', value: new Uint8Array() })).toBeUndefined();
  });
});
