// The configuration's zod schemas are built on first use, not when their modules load: loading
// the config modules (as machined does at every start, maintenance mode included) must construct
// no schema. Every construction goes through lib/zod.ts's `z`, so the test counts the calls made
// through it while the modules load, then while the schemas are asked for.
import { describe, expect, it, vi } from 'vitest';

const calls: string[] = [];
vi.mock('../lib/zod.ts', async (importActual) => {
  const actual = await importActual<typeof import('../lib/zod.ts')>();
  const z = new Proxy(actual.z, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.push(String(key));
        return (v as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
  return { z };
});

describe('config schemas', () => {
  it('are not built while the modules load', async () => {
    const kinds = await import('./kinds.ts');
    const schema = await import('./schema.ts');
    const image = await import('../install/image.ts');
    await import('./validate.ts');
    expect(calls).toEqual([]);

    // Built when asked for, once, and the kinds' specs hand out those very schemas.
    const link = kinds.kindSpec('LinkConfig')!.schema;
    expect(calls.length).toBeGreaterThan(0);
    expect(kinds.kindSpec('LinkConfig')!.schema).toBe(link);
    const volume = kinds.kindSpec('VolumeConfig')!.schema;
    expect(kinds.kindSpec('VolumeConfig')!.schema).toBe(volume);
    expect(schema.encryptionSchemas()).toBe(schema.encryptionSchemas());
    expect(link.safeParse({ apiVersion: 'v1alpha1', kind: 'LinkConfig', name: 'eth0', mtu: 1500 }).success).toBe(true);
    expect(link.safeParse({ apiVersion: 'v1alpha1', kind: 'LinkConfig', name: 'eth0', mtuu: 1500 }).success).toBe(false);
    expect(() => image.parseUpgradeManifest(Buffer.from('{"format":"nope"}'))).toThrow(/format "nope"/);
  });
});
