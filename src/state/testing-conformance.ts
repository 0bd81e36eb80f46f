// The conformance suite every State implementation must pass: memory.test.ts runs it on
// MemoryState, daemon/remote-state.test.ts on RemoteState (over machined's socket). What a
// remote State cannot offer is a capability (StateCapabilities): the cases needing it are
// skipped, or check what holds without it.

import { afterEach, describe, expect, it } from 'vitest';
import {
  type Resource,
  ConflictError,
  NotFoundError,
  OwnerConflictError,
  PhaseConflictError,
  WatchOverflowError,
  newResource,
} from './resource.ts';
import type { State, WatchEvent } from './state.ts';

export interface ConformanceOptions {
  /** The watch queue bound the implementation should use, so the suite can overflow it. */
  watchQueueSize: number;
}

export type StateFactory = (opts: ConformanceOptions) => State | Promise<State>;

/** What an implementation offers beyond the common ground; MemoryState offers all of it. */
export interface StateCapabilities {
  /** Writes with owner ''. machined's socket refuses them (a writer names itself): 'nobody' writes instead. */
  namelessWriter: boolean;
  /** teardown, addFinalizer and removeFinalizer. machined's cosi.resource.State has no call for them. */
  lifecycle: boolean;
  /**
   * A watcher that does not read is cut off (errored: WatchOverflowError) once watchQueueSize
   * events wait for it. Over a socket the transport buffers events before the State's queue
   * fills, so a slow reader may receive them all; writers are never blocked either way.
   */
  boundedWatchQueue: boolean;
}

const ALL: StateCapabilities = { namelessWriter: true, lifecycle: true, boundedWatchQueue: true };

const NS = 'runtime';
const TYPE = 'Tests.bronze.dev';
const QUEUE = 16;

/** Reads events from a watch one at a time, failing after a timeout instead of hanging. */
class Reader<S = unknown> {
  readonly #it: AsyncIterator<WatchEvent<S>>;
  constructor(iterable: AsyncIterable<WatchEvent<S>>) {
    this.#it = iterable[Symbol.asyncIterator]();
  }

  async next(timeout = 2000): Promise<IteratorResult<WatchEvent<S>>> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no watch event within ${timeout} ms`)), timeout);
    });
    try {
      return await Promise.race([this.#it.next(), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  async event(timeout?: number): Promise<WatchEvent<S>> {
    const r = await this.next(timeout);
    if (r.done) throw new Error('watch ended');
    return r.value;
  }

  /** The next n events, as "type id" strings (plus the spec's n field when present). */
  async brief(n: number): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(describeEvent(await this.event()));
    return out;
  }

  /** Resolves when nothing arrives within ms. */
  async quiet(ms = 50): Promise<void> {
    const r = await Promise.race([this.#it.next(), new Promise<'quiet'>((resolve) => setTimeout(() => resolve('quiet'), ms))]);
    if (r !== 'quiet') throw new Error(`unexpected ${r.done ? 'end of watch' : describeEvent(r.value)}`);
  }
}

function describeEvent(ev: WatchEvent): string {
  if (ev.type === 'bootstrapped') return 'bootstrapped';
  if (ev.type === 'errored') return `errored ${ev.error.name}`;
  const n = (ev.resource.spec as { n?: unknown } | null)?.n;
  return `${ev.type} ${ev.resource.metadata.id}${n === undefined ? '' : ` n=${String(n)}`}`;
}

function res(id: string, spec: unknown = { n: 0 }, labels: Record<string, string> = {}, ns = NS, type = TYPE): Resource {
  return newResource(ns, type, id, spec, { labels });
}

/** Runs the State conformance suite against the implementation the factory makes. */
export function stateConformance(name: string, factory: StateFactory, capabilities: Partial<StateCapabilities> = {}): void {
  const can: StateCapabilities = { ...ALL, ...capabilities };
  /** The owner of resources written by no one in particular. */
  const nobody = can.namelessWriter ? '' : 'nobody';
  describe(`State conformance: ${name}`, () => {
    const aborts: AbortController[] = [];
    afterEach(() => {
      for (const ac of aborts.splice(0)) ac.abort();
    });
    const make = () => factory({ watchQueueSize: QUEUE });
    const signal = () => {
      const ac = new AbortController();
      aborts.push(ac);
      return ac.signal;
    };

    describe('create and get', () => {
      it('stores a resource with version 1, the owner, phase running and times', async () => {
        const st = await make();
        const before = Date.now();
        const created = await st.create(res('a', { n: 1, nested: { list: [1, 'x', true, null] } }, { app: 'x' }), { owner: 'ctrl' });
        expect(created.metadata).toMatchObject({ namespace: NS, type: TYPE, id: 'a', version: 1, owner: 'ctrl', phase: 'running' });
        expect(created.metadata.labels).toEqual({ app: 'x' });
        expect(created.metadata.created).toBeInstanceOf(Date);
        expect(created.metadata.created.getTime()).toBeGreaterThanOrEqual(before - 1);
        expect(created.metadata.updated.getTime()).toBe(created.metadata.created.getTime());
        const got = await st.get('runtime', TYPE, 'a');
        expect(got).toEqual(created);
        expect(got.spec).toEqual({ n: 1, nested: { list: [1, 'x', true, null] } });
      });

      it('ignores the version, owner and phase in the argument', async () => {
        const st = await make();
        const r = res('a');
        r.metadata.version = 41;
        r.metadata.owner = 'someone';
        r.metadata.phase = 'tearingDown';
        const created = await st.create(r, { owner: nobody });
        expect(created.metadata).toMatchObject({ version: 1, owner: nobody, phase: 'running' });
      });

      it('refuses an id that is taken with a ConflictError naming it', async () => {
        const st = await make();
        await st.create(res('a'), { owner: 'x' });
        const err = await st.create(res('a'), { owner: 'x' }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ConflictError);
        expect((err as ConflictError).reason).toBe('exists');
        expect((err as Error).message).toContain(`${NS}/${TYPE}/a`);
      });

      it('throws NotFoundError naming namespace, type and id', async () => {
        const st = await make();
        const err = await st.get(NS, TYPE, 'nope').catch((e: unknown) => e);
        expect(err).toBeInstanceOf(NotFoundError);
        expect(err).toMatchObject({ namespace: NS, type: TYPE, id: 'nope' });
        expect((err as Error).message).toContain(`${NS}/${TYPE}/nope`);
      });

      it('keeps namespaces and types apart', async () => {
        const st = await make();
        await st.create(res('a', { n: 1 }), { owner: nobody });
        await st.create(res('a', { n: 2 }, {}, 'network'), { owner: nobody });
        await st.create(res('a', { n: 3 }, {}, NS, 'Others.bronze.dev'), { owner: nobody });
        expect((await st.get(NS, TYPE, 'a')).spec).toEqual({ n: 1 });
        expect((await st.get('network', TYPE, 'a')).spec).toEqual({ n: 2 });
        expect((await st.get(NS, 'Others.bronze.dev', 'a')).spec).toEqual({ n: 3 });
        await expect(st.get('config', TYPE, 'a')).rejects.toBeInstanceOf(NotFoundError);
      });

      it('hands out copies: changing them or the argument does not change the state', async () => {
        const st = await make();
        const r = res('a', { n: 1, list: [1] });
        const created = await st.create(r, { owner: nobody });
        (r.spec as { n: number }).n = 99;
        (created.spec as { list: number[] }).list.push(2);
        created.metadata.labels.x = 'y';
        const got = await st.get(NS, TYPE, 'a');
        (got.spec as { n: number }).n = 98;
        expect((await st.get(NS, TYPE, 'a')).spec).toEqual({ n: 1, list: [1] });
        expect((await st.get(NS, TYPE, 'a')).metadata.labels).toEqual({});
      });

      it('rejects malformed resources', async () => {
        const st = await make();
        await expect(st.create(res(''), { owner: nobody })).rejects.toThrow(/id/);
        await expect(st.create(res('a', { f: () => 1 }), { owner: nobody })).rejects.toThrow(/spec/);
        await expect(st.create(res('a', { n: 1 }, { 'bad key!': 'x' }), { owner: nobody })).rejects.toThrow(/label/);
        await expect(st.get(NS, TYPE, 'a')).rejects.toBeInstanceOf(NotFoundError);
      });
    });

    describe('list', () => {
      it('lists one namespace and type, sorted by id', async () => {
        const st = await make();
        for (const id of ['c', 'a', 'b']) await st.create(res(id), { owner: nobody });
        await st.create(res('d', {}, {}, 'network'), { owner: nobody });
        expect((await st.list(NS, TYPE)).map((r) => r.metadata.id)).toEqual(['a', 'b', 'c']);
        expect(await st.list('config', TYPE)).toEqual([]);
      });

      it('filters by label selector', async () => {
        const st = await make();
        await st.create(res('a', {}, { role: 'cp', zone: 'x' }), { owner: nobody });
        await st.create(res('b', {}, { role: 'worker' }), { owner: nobody });
        await st.create(res('c', {}, {}), { owner: nobody });
        const ids = async (labelSelector: string | Record<string, string>) =>
          (await st.list(NS, TYPE, { labelSelector })).map((r) => r.metadata.id);
        expect(await ids({ role: 'cp' })).toEqual(['a']);
        expect(await ids('role=worker')).toEqual(['b']);
        expect(await ids('role!=cp')).toEqual(['b', 'c']);
        expect(await ids('role')).toEqual(['a', 'b']);
        expect(await ids('!role')).toEqual(['c']);
        expect(await ids('role=cp,zone=x')).toEqual(['a']);
        expect(await ids('role=cp,zone=y')).toEqual([]);
        expect(await ids('')).toEqual(['a', 'b', 'c']);
      });
    });

    describe('update', () => {
      it('replaces spec and labels, bumps the version, keeps created', async () => {
        const st = await make();
        const created = await st.create(res('a', { n: 1 }, { x: '1' }), { owner: 'ctrl' });
        await new Promise((resolve) => setTimeout(resolve, 5));
        created.spec = { n: 2 };
        created.metadata.labels = { y: '2' };
        const updated = await st.update(created, { owner: 'ctrl' });
        expect(updated.metadata.version).toBe(2);
        expect(updated.metadata.created).toEqual(created.metadata.created);
        expect(updated.metadata.updated.getTime()).toBeGreaterThan(created.metadata.created.getTime());
        expect(await st.get(NS, TYPE, 'a')).toEqual(updated);
        expect(updated.spec).toEqual({ n: 2 });
        expect(updated.metadata.labels).toEqual({ y: '2' });
        const again = await st.update(updated, { owner: 'ctrl' });
        expect(again.metadata.version).toBe(3);
      });

      it('checks expectedVersion', async () => {
        const st = await make();
        const r = await st.create(res('a'), { owner: 'ctrl' });
        await st.update(r, { owner: 'ctrl', expectedVersion: 1 });
        const err = await st.update(r, { owner: 'ctrl', expectedVersion: 1 }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ConflictError);
        expect((err as ConflictError).reason).toBe('version');
        expect((err as Error).message).toMatch(new RegExp(`${NS}/${TYPE}/a.*version is 2, expected 1`));
      });

      it('lets exactly one of two racing read-modify-writes win', async () => {
        const st = await make();
        await st.create(res('a', { n: 0 }), { owner: 'ctrl' });
        const [r1, r2] = await Promise.all([st.get(NS, TYPE, 'a'), st.get(NS, TYPE, 'a')]);
        const results = await Promise.allSettled([
          st.update({ ...r1, spec: { n: 1 } }, { owner: 'ctrl', expectedVersion: r1.metadata.version }),
          st.update({ ...r2, spec: { n: 2 } }, { owner: 'ctrl', expectedVersion: r2.metadata.version }),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const rejected = results.find((r) => r.status === 'rejected');
        expect(rejected?.reason).toBeInstanceOf(ConflictError);
        expect((await st.get(NS, TYPE, 'a')).metadata.version).toBe(2);
      });

      it('lets only the owner update', async () => {
        const st = await make();
        const r = await st.create(res('a'), { owner: 'networkd' });
        const err = await st.update(r, { owner: 'timed' }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(OwnerConflictError);
        expect(err).toMatchObject({ owner: 'networkd', requestedBy: 'timed' });
        expect((err as Error).message).toContain(`${NS}/${TYPE}/a`);
        if (can.namelessWriter) await expect(st.update(r, { owner: '' })).rejects.toBeInstanceOf(OwnerConflictError);
        else await expect(st.update(r, { owner: '' })).rejects.toThrow();
        expect((await st.get(NS, TYPE, 'a')).metadata.version).toBe(1);
      });

      it('throws NotFoundError for a missing resource', async () => {
        const st = await make();
        await expect(st.update(res('a'), { owner: nobody })).rejects.toBeInstanceOf(NotFoundError);
      });

      it('keeps owner, phase and finalizers whatever the argument says', async () => {
        const st = await make();
        const r = await st.create(res('a'), { owner: 'ctrl' });
        if (can.lifecycle) await st.addFinalizer(NS, TYPE, 'a', 'keep');
        r.metadata.owner = 'other';
        r.metadata.phase = 'tearingDown';
        r.metadata.finalizers = can.lifecycle ? [] : ['dropped'];
        const updated = await st.update(r, { owner: 'ctrl' });
        if (can.lifecycle) expect(updated.metadata).toMatchObject({ owner: 'ctrl', phase: 'running', finalizers: ['keep'], version: 3 });
        else expect(updated.metadata).toMatchObject({ owner: 'ctrl', phase: 'running', finalizers: [], version: 2 });
      });
    });

    describe('teardown, finalizers and destroy', () => {
      it('destroys as the owner only', async () => {
        const st = await make();
        await st.create(res('a'), { owner: 'ctrl' });
        await expect(st.destroy(NS, TYPE, 'a', { owner: 'other' })).rejects.toBeInstanceOf(OwnerConflictError);
        await st.destroy(NS, TYPE, 'a', { owner: 'ctrl' });
        await expect(st.get(NS, TYPE, 'a')).rejects.toBeInstanceOf(NotFoundError);
        await expect(st.destroy(NS, TYPE, 'a', { owner: 'ctrl' })).rejects.toBeInstanceOf(NotFoundError);
        // The id is free again, and a new resource starts at version 1.
        expect((await st.create(res('a'), { owner: 'x' })).metadata.version).toBe(1);
      });

      it.skipIf(!can.lifecycle)('tears down (owner only, idempotent), then refuses updates and new finalizers', async () => {
        const st = await make();
        const r = await st.create(res('a'), { owner: 'ctrl' });
        await expect(st.teardown(NS, TYPE, 'a', { owner: 'other' })).rejects.toBeInstanceOf(OwnerConflictError);
        const down = await st.teardown(NS, TYPE, 'a', { owner: 'ctrl' });
        expect(down.metadata).toMatchObject({ phase: 'tearingDown', version: 2 });
        expect((await st.teardown(NS, TYPE, 'a', { owner: 'ctrl' })).metadata.version).toBe(2);
        const err = await st.update(r, { owner: 'ctrl' }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(PhaseConflictError);
        expect((err as Error).message).toContain(`${NS}/${TYPE}/a`);
        await expect(st.addFinalizer(NS, TYPE, 'a', 'f')).rejects.toBeInstanceOf(PhaseConflictError);
        await st.destroy(NS, TYPE, 'a', { owner: 'ctrl' });
      });

      it.skipIf(!can.lifecycle)('adds and removes finalizers (any party, idempotent) and blocks destroy while there are some', async () => {
        const st = await make();
        await st.create(res('a'), { owner: 'ctrl' });
        expect((await st.addFinalizer(NS, TYPE, 'a', 'f1', 'f2')).metadata).toMatchObject({ finalizers: ['f1', 'f2'], version: 2 });
        expect((await st.addFinalizer(NS, TYPE, 'a', 'f1')).metadata.version).toBe(2);
        const err = await st.destroy(NS, TYPE, 'a', { owner: 'ctrl' }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ConflictError);
        expect((err as ConflictError).reason).toBe('finalizers');
        expect((err as Error).message).toMatch(/f1, f2/);
        await st.teardown(NS, TYPE, 'a', { owner: 'ctrl' });
        expect((await st.removeFinalizer(NS, TYPE, 'a', 'f1')).metadata.finalizers).toEqual(['f2']);
        expect((await st.removeFinalizer(NS, TYPE, 'a', 'nope')).metadata.version).toBe(4);
        await st.removeFinalizer(NS, TYPE, 'a', 'f2');
        await st.destroy(NS, TYPE, 'a', { owner: 'ctrl' });
        await expect(st.addFinalizer(NS, TYPE, 'a', 'f')).rejects.toBeInstanceOf(NotFoundError);
      });
    });

    describe('watch', () => {
      it('watchKind replays the current state, then bootstrapped, then live events in order', async () => {
        const st = await make();
        await st.create(res('b', { n: 1 }), { owner: 'o' });
        await st.create(res('a', { n: 1 }), { owner: 'o' });
        await st.create(res('z', {}, {}, 'network'), { owner: 'o' });
        const w = new Reader(st.watchKind(NS, TYPE, { signal: signal(), bootstrap: true }));
        expect(await w.brief(3)).toEqual(['created a n=1', 'created b n=1', 'bootstrapped']);
        const a = await st.get(NS, TYPE, 'a');
        await st.update({ ...a, spec: { n: 2 } }, { owner: 'o' });
        await st.create(res('c', { n: 1 }), { owner: 'o' });
        await st.create(res('c', {}, {}, 'network'), { owner: 'o' });
        await st.destroy(NS, TYPE, 'b', { owner: 'o' });
        const up = await w.event();
        expect(up.type).toBe('updated');
        if (up.type !== 'updated') return;
        expect(up.resource.spec).toEqual({ n: 2 });
        expect(up.resource.metadata.version).toBe(2);
        expect(up.old.spec).toEqual({ n: 1 });
        expect(up.old.metadata.version).toBe(1);
        expect(await w.brief(2)).toEqual(['created c n=1', 'destroyed b n=1']);
        await w.quiet();
      });

      it('watchKind without bootstrap sends only live events', async () => {
        const st = await make();
        await st.create(res('a'), { owner: nobody });
        const w = new Reader(st.watchKind(NS, TYPE, { signal: signal(), bootstrap: false }));
        await st.create(res('b'), { owner: nobody });
        expect(await w.brief(1)).toEqual(['created b n=0']);
      });

      it('sees writes made right after it was called, even before it is first read', async () => {
        const st = await make();
        const iterable = st.watchKind(NS, TYPE, { signal: signal(), bootstrap: true });
        await st.create(res('a'), { owner: nobody });
        const w = new Reader(iterable);
        expect(await w.brief(2)).toEqual(['bootstrapped', 'created a n=0']);
      });

      it('watch follows one resource: current state, bootstrapped, its changes only', async () => {
        const st = await make();
        await st.create(res('a', { n: 1 }), { owner: 'o' });
        await st.create(res('b', { n: 1 }), { owner: 'o' });
        const wa = new Reader(st.watch(NS, TYPE, 'a', { signal: signal() }));
        const wm = new Reader(st.watch(NS, TYPE, 'missing', { signal: signal() }));
        const wall = new Reader(st.watch(NS, TYPE, undefined, { signal: signal() }));
        expect(await wa.brief(2)).toEqual(['created a n=1', 'bootstrapped']);
        expect(await wm.brief(1)).toEqual(['bootstrapped']);
        expect(await wall.brief(3)).toEqual(['created a n=1', 'created b n=1', 'bootstrapped']);
        await st.update(res('b', { n: 2 }), { owner: 'o' });
        // An update of a that keeps its spec: teardown, or else the same spec again.
        await (can.lifecycle ? st.teardown(NS, TYPE, 'a', { owner: 'o' }) : st.update(res('a', { n: 1 }), { owner: 'o' }));
        await st.create(res('missing', { n: 5 }), { owner: 'o' });
        await st.destroy(NS, TYPE, 'a', { owner: 'o' });
        expect(await wa.brief(2)).toEqual(['updated a n=1', 'destroyed a n=1']);
        await wa.quiet();
        expect(await wm.brief(1)).toEqual(['created missing n=5']);
        expect(await wall.brief(4)).toEqual(['updated b n=2', 'updated a n=1', 'created missing n=5', 'destroyed a n=1']);
      });

      it.skipIf(!can.lifecycle)('reports teardown and finalizer changes as updates', async () => {
        const st = await make();
        await st.create(res('a'), { owner: 'o' });
        const w = new Reader(st.watch(NS, TYPE, 'a', { signal: signal() }));
        await w.brief(2);
        await st.addFinalizer(NS, TYPE, 'a', 'f');
        await st.teardown(NS, TYPE, 'a', { owner: 'o' });
        const e1 = await w.event();
        const e2 = await w.event();
        expect(e1.type === 'updated' && e1.resource.metadata.finalizers).toEqual(['f']);
        expect(e2.type === 'updated' && [e2.old.metadata.phase, e2.resource.metadata.phase]).toEqual(['running', 'tearingDown']);
      });

      it('ends the iteration when the signal aborts, also for a reader already waiting', async () => {
        const st = await make();
        const ac = new AbortController();
        const w = new Reader(st.watchKind(NS, TYPE, { signal: ac.signal, bootstrap: true }));
        await w.brief(1);
        const pending = w.next();
        await new Promise((resolve) => setTimeout(resolve, 10));
        ac.abort();
        expect((await pending).done).toBe(true);
        await st.create(res('a'), { owner: nobody });
        expect((await w.next()).done).toBe(true);
      });

      it('returns an ended iteration for an already aborted signal', async () => {
        const st = await make();
        await st.create(res('a'), { owner: nobody });
        const w = new Reader(st.watch(NS, TYPE, 'a', { signal: AbortSignal.abort() }));
        expect((await w.next()).done).toBe(true);
      });

      it('stops when the consumer breaks out of for await', async () => {
        const st = await make();
        await st.create(res('a'), { owner: nobody });
        const seen: string[] = [];
        for await (const ev of st.watchKind(NS, TYPE, { signal: signal(), bootstrap: true })) {
          seen.push(ev.type);
          if (ev.type === 'bootstrapped') break;
        }
        expect(seen).toEqual(['created', 'bootstrapped']);
        await st.create(res('b'), { owner: nobody }); // nobody left to deliver to
      });

      it('hands each watcher its own copies', async () => {
        const st = await make();
        const w1 = new Reader(st.watchKind(NS, TYPE, { signal: signal(), bootstrap: false }));
        const w2 = new Reader(st.watchKind(NS, TYPE, { signal: signal(), bootstrap: false }));
        await st.create(res('a', { n: 1 }), { owner: nobody });
        const e1 = await w1.event();
        if (e1.type === 'created') (e1.resource.spec as { n: number }).n = 7;
        expect(await w2.brief(1)).toEqual(['created a n=1']);
        expect((await st.get(NS, TYPE, 'a')).spec).toEqual({ n: 1 });
      });

      it('never blocks writers: a watcher that falls behind gets errored and ends, others go on', async () => {
        const st = await make();
        const slow = new Reader(st.watchKind(NS, TYPE, { signal: signal(), bootstrap: true }));
        const fast = st.watchKind(NS, TYPE, { signal: signal(), bootstrap: true });
        const fastSeen: string[] = [];
        const fastDone = (async () => {
          for await (const ev of fast) {
            fastSeen.push(describeEvent(ev));
            if (fastSeen.length === 1 + 4 * QUEUE) break;
          }
        })();
        const writes = 4 * QUEUE;
        const started = Date.now();
        for (let i = 0; i < writes; i++) {
          await st.create(res(`r${String(i).padStart(3, '0')}`, { n: i }), { owner: nobody });
          await new Promise(setImmediate); // give the fast reader its turn
        }
        expect(Date.now() - started).toBeLessThan(1000);
        await fastDone;
        expect(fastSeen[0]).toBe('bootstrapped');
        expect(fastSeen.at(-1)).toBe(`created r${String(writes - 1).padStart(3, '0')} n=${writes - 1}`);

        // The slow one may see some events first, depending on the queue, but then errored.
        // (Without a bound the watch can see, boundedWatchQueue: errored, or every event.)
        let ev: WatchEvent;
        const got: string[] = [];
        do {
          ev = await slow.event();
          got.push(describeEvent(ev));
        } while (ev.type !== 'errored' && (can.boundedWatchQueue || got.length < 1 + writes));
        expect(got.slice(0, -1).every((g) => g === 'bootstrapped' || g.startsWith('created'))).toBe(true);
        if (ev.type === 'errored') {
          if (can.boundedWatchQueue) expect(got.length).toBeLessThanOrEqual(QUEUE + 2);
          expect(ev.error).toBeInstanceOf(WatchOverflowError);
          expect(ev.error.message).toContain(`${NS}/${TYPE}`);
          expect((await slow.next()).done).toBe(true);
        } else expect([can.boundedWatchQueue, got.at(-1)]).toEqual([false, fastSeen.at(-1)]);
      });

      it('delivers the replay of a large kind in full (the queue bound is for live events)', async () => {
        const st = await make();
        for (let i = 0; i < 3 * QUEUE; i++) await st.create(res(`r${String(i).padStart(3, '0')}`), { owner: nobody });
        const w = new Reader(st.watchKind(NS, TYPE, { signal: signal(), bootstrap: true }));
        const got = await w.brief(3 * QUEUE + 1);
        expect(got.at(-1)).toBe('bootstrapped');
        expect(got.filter((g) => g.startsWith('created'))).toHaveLength(3 * QUEUE);
      });
    });
  });
}
