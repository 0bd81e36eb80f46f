import { describe, expect, it } from 'vitest';
import { ClusterRegistry, memberFromWire, memberToWire, registryHandlers } from './registry.ts';
import { CLUSTER_NAMESPACE, MEMBER_TYPE, type MemberSpec } from '../../contract/resources/member.ts';
import { REGISTRY_LIMITS, RegistryRefusal, workerRecord, workerTtlSeconds } from '../../contract/registry-limits.ts';
import { MemoryState } from '../../state/memory.ts';

describe('the registry wire form (Talos MemberSpec)', () => {
  const spec: MemberSpec = { nodeId: 'node-1', addresses: ['10.0.2.15', 'fd00::2'], hostname: 'cp1', machineType: 'controlplane', operatingSystem: 'Bronze (v0.1.0)' };

  it('round-trips a member, addresses as bytes and the machine type as Talos numbers it', () => {
    const wire = memberToWire(spec) as { machine_type: number; addresses: Array<{ ip: Buffer }> };
    expect(wire.machine_type).toBe(2);
    expect(wire.addresses.map((a) => a.ip.length)).toEqual([4, 16]);
    expect(memberFromWire(wire)).toEqual(spec);
  });

  it('reads the machine type as grpc-js gives enums by name', () => {
    expect(memberFromWire({ ...memberToWire(spec), machine_type: 'TYPE_WORKER' }).machineType).toBe('worker');
    expect(memberFromWire({ ...memberToWire(spec), machine_type: 'SOMETHING' }).machineType).toBe('unknown');
  });
});

describe("the registry's limits on a worker's Hello (checked by trustd, and again by machined)", () => {
  const id = `w-${'ab'.repeat(16)}`;
  const wire = (over: Record<string, unknown> = {}) => ({ ...(memberToWire({ nodeId: '', addresses: ['10.0.0.7'], hostname: 'w7', machineType: 'worker', operatingSystem: 'Bronze (v0.1.0)' }, false) as object), ...over });

  it('makes a worker record of the caller, with the id derived from its certificate', () => {
    expect(workerRecord(wire(), id)).toEqual({ nodeId: id, addresses: ['10.0.0.7'], hostname: 'w7', machineType: 'worker', operatingSystem: 'Bronze (v0.1.0)' });
    // The stored JSON reads back the same (machined checks what it lists, too).
    expect(workerRecord(JSON.parse(JSON.stringify(workerRecord(wire(), id))), id)).toEqual(workerRecord(wire(), id));
    expect(workerRecord(wire({ node_id: id }), id).nodeId).toBe(id);
  });

  it("refuses another node's id, and any id that is not a worker id", () => {
    expect(() => workerRecord(wire({ node_id: 'node-cp1' }), id)).toThrow(/node_id is the caller's, derived from its certificate/);
    expect(() => workerRecord(wire(), 'node-cp1')).toThrow(/is not a worker id/);
    expect(() => workerRecord(wire(), `w-${'AB'.repeat(16)}`)).toThrow(/is not a worker id/);
  });

  it('refuses a control-plane (or init) machine type', () => {
    for (const t of [2, 'TYPE_CONTROL_PLANE', 1, 'TYPE_INIT', 'controlplane']) {
      expect(() => workerRecord(wire({ machine_type: t }), id)).toThrow(RegistryRefusal);
    }
    const e = (() => {
      try {
        workerRecord(wire({ machine_type: 'TYPE_CONTROL_PLANE' }), id);
      } catch (err) {
        return err as RegistryRefusal;
      }
    })();
    expect(e?.kind).toBe('denied');
    expect(e?.message).toMatch(/registers as a worker only/);
    for (const t of [undefined, 0, 3, 'TYPE_UNKNOWN', 'TYPE_WORKER']) expect(workerRecord(wire({ machine_type: t }), id).machineType).toBe('worker');
  });

  it('caps the lease: over 40 s refused, unset 30 s, short ones raised to 5 s', () => {
    expect(() => workerTtlSeconds('9000000000')).toThrow(/ttl_seconds 9000000000 is over the limit of 40 s/);
    expect(() => workerTtlSeconds(41)).toThrow(/over the limit/);
    expect(() => workerTtlSeconds(-1)).toThrow(/not a whole number of seconds >= 0/);
    expect(() => workerTtlSeconds('x')).toThrow(/not a whole number/);
    expect(workerTtlSeconds(40)).toBe(40);
    expect(workerTtlSeconds('0')).toBe(30);
    expect(workerTtlSeconds(undefined)).toBe(30);
    expect(workerTtlSeconds(1)).toBe(5);
  });

  it('caps the addresses (count, each an IP), the hostname, the OS text and the record size', () => {
    const many = Array.from({ length: 17 }, (_, i) => ({ ip: Buffer.from([10, 0, 0, i]) }));
    expect(() => workerRecord(wire({ addresses: many }), id)).toThrow(/17 addresses; at most 16/);
    expect(workerRecord(wire({ addresses: many.slice(0, 16) }), id).addresses).toHaveLength(16);
    expect(() => workerRecord(wire({ addresses: [{ ip: Buffer.alloc(5) }] }), id)).toThrow(/addresses\[0\] is not an IPv4 or IPv6 address/);
    expect(() => workerRecord(wire({ addresses: ['10.0.0.300'] }), id)).toThrow(/addresses\[0\]/);
    expect(() => workerRecord(wire({ hostname: '' }), id)).toThrow(/hostname is required/);
    expect(() => workerRecord(wire({ hostname: `${'a.'.repeat(127)}ab` }), id)).toThrow(/hostname is 256 characters long; at most 253/);
    expect(() => workerRecord(wire({ hostname: 'bad host' }), id)).toThrow(/is not a valid host name/);
    expect(() => workerRecord(wire({ hostname: `${'a'.repeat(64)}` }), id)).toThrow(/is not a valid host name/);
    expect(workerRecord(wire({ hostname: `${'a'.repeat(63)}.example` }), id).hostname).toMatch(/^a{63}\.example$/);
    expect(() => workerRecord(wire({ operating_system: 'x'.repeat(129) }), id)).toThrow(/operating_system is 129 characters long; at most 128/);
    expect(() => workerRecord(wire({ operating_system: 'a\nb' }), id)).toThrow(/control characters/);
    // Within every field's cap, a record can still be held to a smaller size.
    const v6 = Array.from({ length: 16 }, () => ({ ip: Buffer.alloc(16, 0xfe) }));
    expect(() => workerRecord(wire({ addresses: v6, hostname: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}` }), id, { ...REGISTRY_LIMITS, maxRecordBytes: 1024 })).toThrow(/the record is \d+ bytes; at most 1024/);
    // And at the defaults the largest record that passes every field's cap fits the record cap.
    const big = workerRecord(wire({ addresses: v6, hostname: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`, operating_system: 'o'.repeat(128) }), id);
    expect(Buffer.byteLength(JSON.stringify(big))).toBeLessThanOrEqual(REGISTRY_LIMITS.maxRecordBytes);
  });
});

describe('the reply to a worker and the Members', () => {
  it('a reply carries no node_id', () => {
    const w = memberToWire({ nodeId: 'secret-id', addresses: [], hostname: 'cp1', machineType: 'controlplane', operatingSystem: '' }, false);
    expect(w).not.toHaveProperty('node_id');
    expect(JSON.stringify(w)).not.toContain('secret-id');
  });

  it("a control plane's record wins a hostname a worker also claims, whatever the order", async () => {
    const state = new MemoryState();
    const registry = new ClusterRegistry({ log: { info() {}, warn() {} } as never, state, self: () => undefined, etcd: async () => undefined });
    const cp: MemberSpec = { nodeId: 'a', addresses: ['10.0.0.1'], hostname: 'cp1', machineType: 'controlplane', operatingSystem: 'Bronze' };
    const fake: MemberSpec = { nodeId: `w-${'0'.repeat(32)}`, addresses: ['10.6.6.6'], hostname: 'cp1', machineType: 'worker', operatingSystem: 'evil' };
    const w2: MemberSpec = { ...fake, nodeId: `w-${'1'.repeat(32)}`, hostname: 'w2', addresses: ['10.0.0.2'] };
    for (const order of [[fake, cp, w2], [cp, fake, w2]]) {
      await registry.publish(order);
      const list = await state.list<MemberSpec>(CLUSTER_NAMESPACE, MEMBER_TYPE);
      expect(Object.fromEntries(list.map((r) => [r.metadata.id, r.spec.machineType]))).toEqual({ cp1: 'controlplane', w2: 'worker' });
      expect(list.find((r) => r.metadata.id === 'cp1')!.spec.addresses).toEqual(['10.0.0.1']);
    }
  });

  it("machined's handler refuses a relayed Hello that is not a worker's record before it reaches etcd", async () => {
    let asked = 0;
    const state = new MemoryState();
    const registry = new ClusterRegistry({ log: { info() {}, warn() {} } as never, state, self: () => undefined, etcd: async () => undefined });
    const h = registryHandlers({ registry, etcd: async () => (asked++, undefined) });
    const call = (request: object) =>
      new Promise<{ code?: number; details?: string }>((resolve) => (h.Hello as Function)({ request }, (err: { code: number; details: string } | null) => resolve(err ?? {})));
    const id = `w-${'cd'.repeat(16)}`;
    const member = { node_id: id, addresses: [{ ip: Buffer.from([10, 0, 0, 9]) }], hostname: 'w9', machine_type: 3, operating_system: 'Bronze' };
    expect(await call({ member: { ...member, node_id: 'node-cp1' } })).toMatchObject({ code: 3, details: expect.stringMatching(/node_id must be the worker id trustd derives/) });
    expect(await call({ member: { ...member, machine_type: 2 } })).toMatchObject({ code: 7, details: expect.stringMatching(/registers as a worker only/) });
    expect(await call({ member, ttl_seconds: '9000000000' })).toMatchObject({ code: 3, details: expect.stringMatching(/over the limit of 40 s/) });
    expect(await call({ member: { ...member, operating_system: 'x'.repeat(900_000) } })).toMatchObject({ code: 3, details: expect.stringMatching(/operating_system is 900000 characters long/) });
    expect(asked).toBe(0);
    // A valid one gets as far as etcd (none here).
    expect(await call({ member })).toMatchObject({ code: 14 });
    expect(asked).toBe(1);
  });
});
