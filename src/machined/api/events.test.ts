import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { ServiceEvent, ServiceInfo } from '../supervisor/types.ts';
import { EventBus, UlidGenerator, decodeWireEvent, eventsHandlers, mirrorServiceEvents, toWireEvent } from './events.ts';
import { callStream, collect } from './testing.ts';

describe('UlidGenerator', () => {
  it('26 Crockford characters, strictly increasing within a millisecond and across a clock step back', () => {
    let now = 1_700_000_000_000;
    const gen = new UlidGenerator(() => now);
    const ids = [gen.next(), gen.next()];
    now -= 5000;
    ids.push(gen.next());
    now += 10_000;
    ids.push(gen.next());
    for (const id of ids) expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('EventBus', () => {
  const fill = () => {
    let now = 1_000_000;
    const bus = new EventBus({ capacity: 5, now: () => now });
    const tick = (ms: number) => (now += ms);
    for (let i = 1; i <= 7; i++) {
      bus.publishSequence(`seq${i}`, 'START', { actorId: i % 2 ? 'odd' : 'even' });
      tick(1000);
    }
    return { bus, tick };
  };

  it('keeps the last `capacity` events', () => {
    const { bus } = fill();
    expect(bus.history().map((e) => (e.data as { sequence: string }).sequence)).toEqual(['seq3', 'seq4', 'seq5', 'seq6', 'seq7']);
  });

  it('selects as Talos: nothing by default, last N, all, after an id, the last seconds, by actor', () => {
    const { bus } = fill();
    const seqs = (evs: ReturnType<EventBus['select']>) => evs.map((e) => (e.data as { sequence: string }).sequence);
    expect(bus.select({})).toEqual([]);
    expect(seqs(bus.select({ tailEvents: 2 }))).toEqual(['seq6', 'seq7']);
    expect(seqs(bus.select({ tailEvents: -1 }))).toHaveLength(5);
    const id4 = bus.history()[1]!.id;
    expect(seqs(bus.select({ tailId: id4 }))).toEqual(['seq5', 'seq6', 'seq7']);
    expect(seqs(bus.select({ tailId: '0' }))).toHaveLength(5); // older than anything kept
    // now is 1 s after seq7: the last 2 seconds hold seq6 and seq7.
    expect(seqs(bus.select({ tailSeconds: 2 }))).toEqual(['seq6', 'seq7']);
    expect(seqs(bus.select({ tailEvents: 3, actorId: 'odd' }))).toEqual(['seq5', 'seq7']);
    expect(() => bus.select({ tailEvents: 1, tailSeconds: 1 })).toThrow(/only one of/);
    expect(() => bus.select({ tailSeconds: -1 })).toThrow(/negative/);
  });

  it('subscribers see every new event; a throwing one does not stop the others', () => {
    const bus = new EventBus();
    const seen: string[] = [];
    bus.subscribe(() => {
      throw new Error('boom');
    });
    const off = bus.subscribe((e) => seen.push(e.type));
    bus.publishSequence('boot', 'START');
    off();
    bus.publishSequence('boot', 'STOP');
    expect(seen).toEqual(['machine.SequenceEvent']);
  });
});

describe('wire events', () => {
  it('packs the payload into an Any with the Talos type URL', () => {
    const bus = new EventBus();
    const ev = bus.publishSequence('reboot', 'START', { actorId: 'a1', error: { code: 'LOCKED', message: 'busy' } });
    const wire = toWireEvent(ev);
    expect(wire.id).toBe(ev.id);
    expect(wire.actor_id).toBe('a1');
    expect(wire.data.type_url).toBe('talos/runtime/machine.SequenceEvent');
    expect(decodeWireEvent(wire)).toEqual({
      type: 'machine.SequenceEvent',
      data: { sequence: 'reboot', action: 'START', error: { code: 'LOCKED', message: 'busy', details: [] } },
    });
  });

  it('service state events from the supervisor, with health', () => {
    const sup = new EventEmitter();
    const info: ServiceInfo = { id: 'apid', state: 'Running', healthy: true, lastHealthMessage: 'ok', restarts: 0, events: [] };
    const bus = new EventBus();
    const stop = mirrorServiceEvents(Object.assign(sup, { get: (id: string) => (id === 'apid' ? info : undefined) }), bus);
    sup.emit('event', 'apid', { ts: new Date(), state: 'Running', message: 'Process started (pid 7)' } satisfies ServiceEvent);
    stop();
    sup.emit('event', 'apid', { ts: new Date(), state: 'Finished', message: 'x' } satisfies ServiceEvent);
    expect(bus.history()).toHaveLength(1);
    const decoded = decodeWireEvent(toWireEvent(bus.history()[0]!));
    expect(decoded).toEqual({
      type: 'machine.ServiceStateEvent',
      data: { service: 'apid', action: 'RUNNING', message: 'Process started (pid 7)', health: { unknown: false, healthy: true, last_message: 'ok', last_change: null } },
    });
  });
});

describe('Events RPC', () => {
  it('history, then live events, filtered by actor, until cancelled', async () => {
    const bus = new EventBus();
    bus.publishSequence('boot', 'START');
    bus.publishSequence('boot', 'STOP');
    const h = eventsHandlers(bus);
    const s = callStream(h.Events, { tail_events: -1 });
    await s.waitFor(2);
    bus.publishSequence('reboot', 'START', { actorId: 'x' });
    await s.waitFor(3);
    expect(s.messages.map((m) => decodeWireEvent(m).data.sequence)).toEqual(['boot', 'boot', 'reboot']);
    s.cancel();
    await s.done;

    const mine = callStream(h.Events, { tail_events: -1, with_actor_id: 'x' });
    await mine.waitFor(1);
    bus.publishSequence('other', 'START', { actorId: 'y' });
    bus.publishSequence('reboot', 'STOP', { actorId: 'x' });
    await mine.waitFor(2);
    expect(mine.messages.map((m) => m.actor_id)).toEqual(['x', 'x']);
    mine.cancel();
    await mine.done;
  });

  it('two tail options → INVALID_ARGUMENT', async () => {
    await expect(collect(eventsHandlers(new EventBus()).Events, { tail_events: 1, tail_id: 'X' })).rejects.toMatchObject({ code: 3 });
  });
});
