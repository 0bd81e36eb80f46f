import { describe, expect, it } from 'vitest';
import type { ServiceInfo } from '../supervisor/types.ts';
import { lastHealthChange, serviceHandlers, serviceHealth, toWireServiceInfo, type ServiceControl } from './services.ts';
import { callUnary } from './testing.ts';

const t0 = new Date('2024-05-01T10:00:00.000Z');
const at = (s: number) => new Date(t0.getTime() + s * 1000);

function fakeSupervisor(): ServiceControl & { calls: string[]; infos: Map<string, ServiceInfo> } {
  const infos = new Map<string, ServiceInfo>([
    [
      'apid',
      {
        id: 'apid',
        state: 'Running',
        pid: 100,
        healthy: true,
        lastHealthMessage: 'Health check successful',
        restarts: 0,
        events: [
          { ts: at(0), state: 'Waiting', message: 'Waiting for networkd' },
          { ts: at(1), state: 'Running', message: 'Process started (pid 100)' },
          { ts: at(2), state: 'Running', message: 'Health check successful' },
        ],
      },
    ],
    ['trustd', { id: 'trustd', state: 'Waiting', restarts: 0, events: [{ ts: at(0), state: 'Waiting', message: 'Waiting for networkd' }] }],
    ['timed', { id: 'timed', state: 'Running', pid: 101, healthy: true, restarts: 0, events: [{ ts: at(1), state: 'Running', message: 'Process started (pid 101)' }] }],
  ]);
  const calls: string[] = [];
  return {
    calls,
    infos,
    list: () => [...infos.values()],
    get: (id) => infos.get(id),
    startService: async (id) => {
      calls.push(`start ${id}`);
      if (id === 'trustd') await new Promise(() => {}); // dependencies down: never settles
    },
    stopService: async (id) => {
      calls.push(`stop ${id}`);
    },
  };
}

describe('service info in the Talos shape', () => {
  it('health: unknown until checked, last change from the last health event', () => {
    const apid = fakeSupervisor().get('apid')!;
    expect(lastHealthChange(apid.events)).toEqual(at(2));
    expect(serviceHealth(apid)).toEqual({ unknown: false, healthy: true, last_message: 'Health check successful', last_change: { seconds: at(2).getTime() / 1000, nanos: 0 } });
    expect(serviceHealth({ healthy: undefined, events: [] })).toEqual({ unknown: true, healthy: false, last_message: '' });
  });

  it('events as {msg, state, ts}', () => {
    const wire = toWireServiceInfo(fakeSupervisor().get('apid')!);
    expect(wire.id).toBe('apid');
    expect(wire.state).toBe('Running');
    expect(wire.events.events[1]).toEqual({ msg: 'Process started (pid 100)', state: 'Running', ts: { seconds: at(1).getTime() / 1000, nanos: 0 } });
  });
});

describe('service handlers', () => {
  it('ServiceList: machined and every supervised service, sorted by id', async () => {
    const h = serviceHandlers(fakeSupervisor(), { startedAt: t0 });
    const reply = await callUnary(h.ServiceList, {});
    expect(reply.messages).toHaveLength(1);
    expect(reply.messages[0].metadata).toBeUndefined();
    const services = reply.messages[0].services;
    expect(services.map((s: { id: string }) => s.id)).toEqual(['apid', 'machined', 'timed', 'trustd']);
    expect(services[1]).toMatchObject({ state: 'Running', health: { unknown: true } });
    expect(services[3]).toMatchObject({ state: 'Waiting', health: { unknown: true, healthy: false } });
  });

  it('Start, Stop and Restart call the supervisor and answer as Talos', async () => {
    const sup = fakeSupervisor();
    const h = serviceHandlers(sup);
    expect(await callUnary(h.ServiceStop, { id: 'timed' })).toEqual({ messages: [{ resp: 'Service "timed" stopped' }] });
    expect(await callUnary(h.ServiceStart, { id: 'timed' })).toEqual({ messages: [{ resp: 'Service "timed" started' }] });
    expect(await callUnary(h.ServiceRestart, { id: 'timed' })).toEqual({ messages: [{ resp: 'Service "timed" restarted' }] });
    expect(sup.calls).toEqual(['stop timed', 'start timed', 'stop timed', 'start timed']);
  });

  it('apid, which carries the call, is stopped or restarted only after the reply', async () => {
    const sup = fakeSupervisor();
    const h = serviceHandlers(sup, { afterReplyMs: 20 });
    const restart = await callUnary(h.ServiceRestart, { id: 'apid' });
    expect(restart).toEqual({ messages: [{ resp: 'Service "apid" restarting: the API comes back in a few seconds' }] });
    expect(sup.calls, 'nothing happened before the reply').toEqual([]);
    await new Promise((r) => setTimeout(r, 60));
    expect(sup.calls).toEqual(['stop apid', 'start apid']);
    const stop = await callUnary(h.ServiceStop, { id: 'apid' });
    expect(stop.messages[0].resp).toMatch(/^Service "apid" stopping/);
    expect(sup.calls).toEqual(['stop apid', 'start apid']);
    await new Promise((r) => setTimeout(r, 60));
    expect(sup.calls).toEqual(['stop apid', 'start apid', 'stop apid']);
  });

  it('unknown ids are NOT_FOUND, an empty id INVALID_ARGUMENT, machined FAILED_PRECONDITION', async () => {
    const h = serviceHandlers(fakeSupervisor());
    await expect(callUnary(h.ServiceStart, { id: 'nope' })).rejects.toEqual({ code: 5, message: 'service "nope" not found' });
    await expect(callUnary(h.ServiceStop, { id: '' })).rejects.toMatchObject({ code: 3 });
    await expect(callUnary(h.ServiceRestart, { id: 'machined' })).rejects.toMatchObject({ code: 9, message: expect.stringContaining('machined') });
  });
});
