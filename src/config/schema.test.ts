// schema.ts builds the v1alpha1 tree on first use: once, and with the field lists the messages
// name kept equal to the schemas they describe.
import { describe, expect, it } from 'vitest';
import { DEVICE_SELECTOR_FIELDS, MACHINE_TYPES, v1alpha1Schemas } from './schema.ts';

describe('v1alpha1Schemas', () => {
  it('builds the schemas once', () => {
    expect(v1alpha1Schemas()).toBe(v1alpha1Schemas());
  });

  it('names the deviceSelector fields and machine types its schemas have', () => {
    const s = v1alpha1Schemas();
    expect([...DEVICE_SELECTOR_FIELDS].sort()).toEqual(Object.keys(s.deviceSelectorSchema.shape).sort());
    expect([...MACHINE_TYPES].sort()).toEqual([...s.machineSchema.shape.type.options].sort());
  });

  it('parses a document, and refuses an unknown field', () => {
    const { networkSchema } = v1alpha1Schemas();
    expect(networkSchema.parse({ hostname: 'node-1' })).toEqual({ hostname: 'node-1' });
    expect(networkSchema.safeParse({ hostnam: 'node-1' }).success).toBe(false);
  });
});
