import { describe, expect, it } from 'vitest';
import { messageType } from '../protos.ts';
import { encodeMessage, unusedKeys } from './codec.ts';
import { linkStatusDefinition } from './link-status.ts';
import { timeStatusDefinition } from './time-status.ts';
import { protoSpec } from './wire.ts';

describe('the table-driven spec codec', () => {
  it('fills each field from the spec key of its name, any case, underscores aside', () => {
    const t = messageType('talos.resource.definitions.time.StatusSpec');
    expect(encodeMessage(t, {}, { synced: true, epoch: 3, syncDisabled: true })).toEqual({ synced: true, epoch: 3, sync_disabled: true });
    expect(protoSpec(timeStatusDefinition, { synced: true, epoch: 1, syncDisabled: false }).toString('hex')).toBe('08011001');
  });

  it('an all-default TimeStatus is no bytes, as Go marshals it; COSI reads that as the default spec', () => {
    // Talos's timed publishes {synced: false, epoch: 0} before its first sync: proto.Marshal (and
    // protoenc) write nothing, and COSI's client unmarshals the empty proto_spec as that spec.
    expect(protoSpec(timeStatusDefinition, { synced: false, epoch: 0, syncDisabled: false })).toHaveLength(0);
  });

  it('follows the rules for the exceptions: other keys, name tables, nested paths', () => {
    const t = messageType(linkStatusDefinition.proto!.message);
    const m = encodeMessage(t, linkStatusDefinition.proto!.fields!, { type: 'ether', flags: 'UP', speedMbit: 1000, vlan: { vlanID: 7, vlanProtocol: '802.1q' }, hardwareAddr: '52:54:00:12:34:56' });
    expect(m).toMatchObject({ type: 1, flags: 1, speed_megabits: 1000, vlan: { vid: 7, protocol: 0x8100 } });
    expect([...(m.hardware_addr as Buffer)]).toEqual([0x52, 0x54, 0, 0x12, 0x34, 0x56]);
  });

  it('names the spec keys no field takes', () => {
    const t = messageType('talos.resource.definitions.time.StatusSpec');
    expect(unusedKeys(t, {}, { synced: true, epoch: 1, syncDisabled: false, lastSync: 'x' })).toEqual(['lastSync']);
    const link = messageType(linkStatusDefinition.proto!.message);
    expect(unusedKeys(link, linkStatusDefinition.proto!.fields!, { index: 1, vlan: { vlanID: 7, vlanProtocol: '802.1q', extra: 1 } })).toEqual(['vlan.extra']);
  });
});
