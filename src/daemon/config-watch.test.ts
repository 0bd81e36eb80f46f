import { describe, expect, it } from 'vitest';
import { typedConfig } from '../config/testing.ts';
import { silentLogger } from '../lib/log.ts';
import { MemoryState } from '../state/memory.ts';
import { newResource } from '../state/resource.ts';
import { MACHINE_CONFIG, watchMachineConfig, type MachineConfigView } from './config-watch.ts';
import { StatePublisher } from './publisher.ts';

describe("a daemon's view of the machine configuration", () => {
  it('is the typed configuration machined published as ParsedMachineConfig, as it is, and undefined once it goes', async () => {
    expect(MACHINE_CONFIG).toEqual({ namespace: 'config', type: 'ParsedMachineConfigs.config.bronze.dev', id: 'v1alpha1' });
    const state = new MemoryState();
    const seen: Array<MachineConfigView | undefined> = [];
    const ctl = new AbortController();
    const done = watchMachineConfig(new StatePublisher(state, 'timed'), (v) => v, (v) => void seen.push(v), silentLogger, ctl.signal);
    const spec = typedConfig({ machine: { time: { servers: ['a'] } } }, [{ kind: 'TimeSyncConfig', enabled: false }]);
    await state.create(newResource(MACHINE_CONFIG.namespace, MACHINE_CONFIG.type, MACHINE_CONFIG.id, spec), { owner: 'machined' });
    for (let i = 0; i < 50 && seen.length < 1; i++) await new Promise((res) => setTimeout(res, 20));
    await state.destroy(MACHINE_CONFIG.namespace, MACHINE_CONFIG.type, MACHINE_CONFIG.id, { owner: 'machined' });
    for (let i = 0; i < 50 && seen.length < 2; i++) await new Promise((res) => setTimeout(res, 20));
    ctl.abort();
    await done;
    expect(seen).toEqual([spec, undefined]);
  });
});
