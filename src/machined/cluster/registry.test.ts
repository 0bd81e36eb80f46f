import { describe, expect, it } from 'vitest';
import { memberFromWire, memberToWire } from './registry.ts';
import type { MemberSpec } from '../../contract/resources/member.ts';

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
