import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.ts';
import { ControllerRuntime } from '../../state/controller.ts';
import { MemoryState } from '../../state/memory.ts';
import { newResource } from '../../state/resource.ts';
import { ephemeralMountController, ephemeralNoatime } from './ephemeral-mount.ts';
import { DEFAULT_TRIM_INTERVAL_MS, trimOffsetMs, trimPlans, trimVolume } from './fstrim.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE } from '../../contract/resources/machine-config.ts';
import { machineConfigSpecOf, type DocumentPart } from '../../config/testing.ts';

const VOLUMES = [
  { label: 'STATE', mountpoint: '/system/state' },
  { label: 'EPHEMERAL', mountpoint: '/var' },
];
const spec = (...documents: DocumentPart[]) => machineConfigSpecOf(undefined, documents);

describe('FilesystemTrimConfig and VolumeConfig trim', () => {
  it('trims nothing without the document', () => {
    expect(trimPlans(spec(), VOLUMES)).toEqual([]);
    expect(trimPlans(undefined, VOLUMES)).toEqual([]);
  });

  it('trims every volume at the document\'s interval (a week by default, as Talos)', () => {
    expect(trimPlans(spec({ kind: 'FilesystemTrimConfig', interval: '168h0m0s' }), VOLUMES).map((p) => [p.label, p.intervalMs])).toEqual([
      ['STATE', DEFAULT_TRIM_INTERVAL_MS],
      ['EPHEMERAL', DEFAULT_TRIM_INTERVAL_MS],
    ]);
    expect(trimPlans(spec({ kind: 'FilesystemTrimConfig' }), VOLUMES)[0]!.intervalMs).toBe(DEFAULT_TRIM_INTERVAL_MS);
    expect(trimPlans(spec({ kind: 'FilesystemTrimConfig', interval: '0s' }), VOLUMES)).toEqual([]);
  });

  it('lets a VolumeConfig turn a volume off, on, or give it its own interval; chunks and minimum length come from the document', () => {
    const plans = trimPlans(
      spec({ kind: 'FilesystemTrimConfig', interval: '24h', chunkSize: '1GiB', chunkDelay: '250ms', minLength: '1MiB' }, { kind: 'VolumeConfig', name: 'EPHEMERAL', trim: { interval: '1h' } }),
      VOLUMES,
    );
    expect(plans).toEqual([
      { label: 'STATE', mountpoint: '/system/state', intervalMs: 86_400_000, chunkSize: 1024 ** 3, chunkDelayMs: 250, minLength: 1024 ** 2 },
      { label: 'EPHEMERAL', mountpoint: '/var', intervalMs: 3_600_000, chunkSize: 1024 ** 3, chunkDelayMs: 250, minLength: 1024 ** 2 },
    ]);
    expect(trimPlans(spec({ kind: 'FilesystemTrimConfig' }, { kind: 'VolumeConfig', name: 'STATE', trim: { enabled: false } }), VOLUMES).map((p) => p.label)).toEqual(['EPHEMERAL']);
    expect(trimPlans(spec({ kind: 'VolumeConfig', name: 'EPHEMERAL', trim: { enabled: true } }), VOLUMES).map((p) => [p.label, p.intervalMs])).toEqual([['EPHEMERAL', DEFAULT_TRIM_INTERVAL_MS]]);
  });

  it('spreads trims over the interval, stably per node and volume', () => {
    const a = trimOffsetMs('node-a', 'EPHEMERAL', DEFAULT_TRIM_INTERVAL_MS);
    expect(trimOffsetMs('node-a', 'EPHEMERAL', DEFAULT_TRIM_INTERVAL_MS)).toBe(a);
    expect(trimOffsetMs('node-b', 'EPHEMERAL', DEFAULT_TRIM_INTERVAL_MS)).not.toBe(a);
    expect(trimOffsetMs('node-a', 'STATE', DEFAULT_TRIM_INTERVAL_MS)).not.toBe(a);
    expect(a).toBeGreaterThanOrEqual(0);
    expect(a).toBeLessThan(DEFAULT_TRIM_INTERVAL_MS);
  });

  it('trims whole, or chunk by chunk with the minimum length', async () => {
    const calls: unknown[] = [];
    const d = { trim: (_: string, r: object) => (calls.push(r), 10), size: () => 2.5 * 1024 ** 2 };
    expect(await trimVolume({ label: 'EPHEMERAL', mountpoint: '/var', intervalMs: 1, chunkDelayMs: 0 }, d)).toBe(10);
    expect(calls).toEqual([{}]);
    calls.length = 0;
    expect(await trimVolume({ label: 'EPHEMERAL', mountpoint: '/var', intervalMs: 1, chunkSize: 1024 ** 2, chunkDelayMs: 1, minLength: 4096 }, d)).toBe(30);
    expect(calls).toEqual([0, 1, 2].map((i) => ({ start: i * 1024 ** 2, len: 1024 ** 2, minLength: 4096 })));
  });
});

describe('EphemeralMountController', () => {
  it('remounts /var noatime when a VolumeConfig asks, and back', async () => {
    expect(ephemeralNoatime(spec({ kind: 'VolumeConfig', name: 'EPHEMERAL', mount: { disableAccessTime: true } }))).toBe(true);
    expect(ephemeralNoatime(spec({ kind: 'VolumeConfig', name: 'EPHEMERAL', mount: { secure: true } }))).toBe(false);
    const state = new MemoryState();
    const calls: Array<[string, boolean]> = [];
    const rt = new ControllerRuntime(state, { log: silentLogger });
    rt.register(ephemeralMountController((t, n) => calls.push([t, n])));
    rt.start();
    const r = newResource(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID, spec({ kind: 'VolumeConfig', name: 'EPHEMERAL', mount: { disableAccessTime: true } }));
    await state.create(r, { owner: 'machined' });
    await expect.poll(() => calls).toEqual([['/var', true]]);
    const cur = await state.get(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID);
    await state.update({ ...cur, spec: spec() }, { owner: 'machined' });
    await expect.poll(() => calls).toEqual([['/var', true], ['/var', false]]);
    await rt.stop();
  });
});
