import { silentLogger } from '../lib/log.ts';
import { describe, expect, it } from 'vitest';
import { StatePublisher } from '../daemon/publisher.ts';
import { MemoryState } from '../state/memory.ts';
import { newResource } from '../state/resource.ts';
import type { TimeConfig } from './sync.ts';
import { typedConfig } from '../config/testing.ts';
import { MACHINE_CONFIG, timeConfigOf, watchTimeConfig } from './config-watch.ts';

const quiet = silentLogger;

describe('time configuration input', () => {
  it('takes TimeSyncConfig over machine.time', () => {
    expect(timeConfigOf(typedConfig({ machine: { time: { servers: ['a'], bootTimeout: '2m' } } }))).toEqual({ servers: ['a'], bootTimeout: '2m' });
    expect(timeConfigOf(typedConfig({ machine: { time: { servers: ['a'] } } }, [{ kind: 'TimeSyncConfig', enabled: false, ntp: { servers: ['b'] } }]))).toEqual({ disabled: true, servers: ['b'] });
    expect(timeConfigOf(typedConfig({ machine: {} }))).toEqual({});
    expect(timeConfigOf(undefined)).toBeUndefined();
  });

  it('follows the typed configuration machined publishes (ParsedMachineConfig) as it changes', async () => {
    const state = new MemoryState();
    const seen: Array<TimeConfig | undefined> = [];
    const ctl = new AbortController();
    const done = watchTimeConfig(new StatePublisher(state, 'timed'), (c) => seen.push(c), quiet, ctl.signal);
    const mk = (servers: string[]) => typedConfig({ machine: { time: { servers } } });
    await state.create(newResource(MACHINE_CONFIG.namespace, MACHINE_CONFIG.type, MACHINE_CONFIG.id, mk(['s1'])), { owner: 'machined' });
    const r = await state.get(MACHINE_CONFIG.namespace, MACHINE_CONFIG.type, MACHINE_CONFIG.id);
    await state.update({ ...r, spec: mk(['s2']) }, { owner: 'machined' });
    for (let i = 0; i < 50 && seen.length < 2; i++) await new Promise((res) => setTimeout(res, 20));
    ctl.abort();
    await done;
    expect(seen).toEqual([{ servers: ['s1'] }, { servers: ['s2'] }]);
  });
});
