// The controller runtime against a real MemoryState, with real (small) delays.

import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../lib/log.ts';
import {
  type Controller,
  type ControllerContext,
  ControllerAccessError,
  ControllerRuntime,
  type ControllerRuntimeOptions,
  registerControllers,
} from './controller.ts';
import { MemoryState } from './memory.ts';
import { OwnerConflictError, newResource } from './resource.ts';

const IN = 'Inputs.bronze.dev';
const OUT = 'Outputs.bronze.dev';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, timeout = 3000): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

class RecordingLogger implements Logger {
  readonly lines: string[] = [];
  info(m: string) {
    this.lines.push(`info ${m}`);
  }
  warn(m: string) {
    this.lines.push(`warn ${m}`);
  }
  error(m: string) {
    this.lines.push(`error ${m}`);
  }
}

const runtimes: ControllerRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((rt) => rt.stop()));
});

function setup(opts: ControllerRuntimeOptions & { queue?: number } = {}) {
  const state = new MemoryState({ watchQueueSize: opts.queue ?? 1024 });
  const log = new RecordingLogger();
  const rt = new ControllerRuntime(state, { log, backoffBase: 10, ...opts });
  runtimes.push(rt);
  return { state, log, rt };
}

/** A controller that counts its passes and copies the number of inputs into one output. */
function counter(name = 'CountController', extra: Partial<Controller> = {}) {
  const passes: number[] = [];
  const c: Controller = {
    name,
    inputs: [{ namespace: 'runtime', type: IN, kind: 'weak' }],
    outputs: [{ type: OUT, kind: 'exclusive' }],
    async run(ctx) {
      passes.push(Date.now());
      const n = (await ctx.state.list('runtime', IN)).length;
      await ctx.state.apply('runtime', OUT, 'count', { n });
    },
    ...extra,
  };
  return { c, passes };
}

const input = (id: string, spec: unknown = {}) => newResource('runtime', IN, id, spec);

describe('ControllerRuntime', () => {
  it('runs a controller at start and again when an input changes, writing as its owner', async () => {
    const { state, rt } = setup();
    await state.create(input('a'), { owner: 'user' });
    const { c, passes } = counter();
    rt.register(c);
    rt.start();
    await waitFor('first pass', () => passes.length === 1);
    await waitFor('output', async () => (await state.list('runtime', OUT)).length === 1);
    const out = await state.get('runtime', OUT, 'count');
    expect(out.spec).toEqual({ n: 1 });
    expect(out.metadata.owner).toBe('CountController');

    await state.create(input('b'), { owner: 'user' });
    await waitFor('second pass', async () => ((await state.get('runtime', OUT, 'count')).spec as { n: number }).n === 2);
    await sleep(30);
    // Its own write to OUT (not an input) triggers nothing; apply with an equal spec is a no-op.
    expect(passes).toHaveLength(2);
    expect((await state.get('runtime', OUT, 'count')).metadata.version).toBe(2);
    expect(rt.status()).toEqual([{ name: 'CountController', runs: 2, failures: 0 }]);
  });

  it('coalesces a burst of changes made in one tick into one pass', async () => {
    const { state, rt } = setup();
    const { c, passes } = counter();
    rt.register(c);
    rt.start();
    await waitFor('first pass', () => passes.length === 1);
    await Promise.all(Array.from({ length: 50 }, (_, i) => state.create(input(`r${i}`), { owner: '' })));
    await waitFor('count 50', async () => ((await state.get('runtime', OUT, 'count')).spec as { n: number }).n === 50);
    await sleep(30);
    expect(passes).toHaveLength(2);
  });

  it('coalesces changes made during a slow pass into exactly one more pass', async () => {
    const { state, rt } = setup();
    let started = 0;
    let finished = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    rt.register({
      name: 'SlowController',
      inputs: [{ namespace: 'runtime', type: IN, kind: 'weak' }],
      outputs: [],
      async run() {
        started++;
        await gate; // the first pass lasts until the test releases it
        finished++;
      },
    });
    rt.start();
    await waitFor('first pass started', () => started === 1);
    for (let i = 0; i < 10; i++) {
      await state.create(input(`r${i}`), { owner: '' });
      await sleep(2);
    }
    expect(finished).toBe(0);
    release();
    await waitFor('second pass', () => finished === 2);
    await sleep(50);
    expect(started).toBe(2);
  });

  it('restarts a failing controller with growing delays and logs it', async () => {
    const { rt, log } = setup({ backoffBase: 20 });
    const times: number[] = [];
    rt.register({
      name: 'FlakyController',
      inputs: [],
      outputs: [],
      async run() {
        times.push(Date.now());
        if (times.length <= 3) throw new Error(`boom ${times.length}`);
      },
    });
    rt.start();
    await waitFor('fourth pass', () => times.length === 4);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(18);
    expect(gaps[1]).toBeGreaterThanOrEqual(38);
    expect(gaps[2]).toBeGreaterThanOrEqual(78);
    expect(log.lines.filter((l) => l.startsWith('error'))).toEqual([
      'error controller FlakyController: failed (attempt 1), restarting in 20 ms: boom 1',
      'error controller FlakyController: failed (attempt 2), restarting in 40 ms: boom 2',
      'error controller FlakyController: failed (attempt 3), restarting in 80 ms: boom 3',
    ]);
    expect(log.lines).toContain('info controller FlakyController: recovered after 3 failed attempt(s)');
    expect(rt.status()[0]).toMatchObject({ runs: 1, failures: 0, lastError: 'boom 3' });
  });

  it('caps the backoff', async () => {
    const { rt, log } = setup({ backoffBase: 10, backoffMax: 15 });
    let n = 0;
    rt.register({
      name: 'BrokenController',
      inputs: [],
      outputs: [],
      async run() {
        n++;
        throw new Error('always');
      },
    });
    rt.start();
    await waitFor('four attempts', () => n >= 4);
    expect(log.lines.slice(0, 3).map((l) => l.match(/restarting in (\d+) ms/)?.[1])).toEqual(['10', '15', '15']);
    expect(rt.status()[0]).toMatchObject({ failures: expect.any(Number), lastError: 'always' });
  });

  it('lets a controller write only its outputs and read only its inputs and outputs', async () => {
    const { state, rt } = setup();
    await state.create(newResource('network', 'Secrets.bronze.dev', 'k', {}), { owner: 'x' });
    const errors: unknown[] = [];
    const attempt = async (f: () => Promise<unknown>) => {
      try {
        await f();
      } catch (e) {
        errors.push(e);
      }
    };
    let done = false;
    rt.register({
      name: 'NosyController',
      inputs: [{ namespace: 'runtime', type: IN, kind: 'weak' }],
      outputs: [{ type: OUT, kind: 'shared' }],
      async run(ctx) {
        await attempt(() => ctx.state.create(newResource('runtime', IN, 'x', {})));
        await attempt(() => ctx.state.apply('runtime', 'Others.bronze.dev', 'x', {}));
        await attempt(() => ctx.state.get('network', 'Secrets.bronze.dev', 'k'));
        await attempt(() => ctx.state.list('network', IN));
        await attempt(() => ctx.state.addFinalizer('runtime', IN, 'x', 'mine'));
        // Allowed: outputs in any namespace, inputs.
        await ctx.state.apply('network', OUT, 'n', { ok: true });
        expect(await ctx.state.find('runtime', IN, 'nope')).toBeUndefined();
        done = true;
      },
    });
    rt.start();
    await waitFor('pass', () => done);
    expect(errors).toHaveLength(5);
    expect(errors.every((e) => e instanceof ControllerAccessError)).toBe(true);
    expect((errors as Error[]).map((e) => e.message)).toEqual([
      `controller NosyController may not write ${IN}: not among its outputs`,
      'controller NosyController may not write Others.bronze.dev: not among its outputs',
      'controller NosyController may not read network/Secrets.bronze.dev: not among its inputs or outputs',
      `controller NosyController may not read network/${IN}: not among its inputs or outputs`,
      `controller NosyController may not set finalizers on runtime/${IN}: not a strong input`,
    ]);
    expect((await state.get('network', OUT, 'n')).metadata.owner).toBe('NosyController');
  });

  it('lets controllers share an output type, each owning its own resources', async () => {
    const { state, rt } = setup();
    const failures: unknown[] = [];
    const writer = (name: string, id: string): Controller => ({
      name,
      inputs: [],
      outputs: [{ type: OUT, kind: 'shared' }],
      async run(ctx) {
        await ctx.state.apply('runtime', OUT, id, { by: name });
        // Touching the other's resource fails, whatever the handle allows by type.
        const other = await ctx.state.find('runtime', OUT, id === 'a' ? 'b' : 'a');
        if (other) {
          try {
            await ctx.state.update({ ...other, spec: { by: name } });
          } catch (e) {
            failures.push(e);
          }
        } else {
          ctx.requeueAfter(5);
        }
      },
    });
    registerControllers(rt, [writer('AController', 'a'), writer('BController', 'b')]);
    rt.start();
    await waitFor('both saw each other', () => failures.length >= 2);
    expect(failures.every((e) => e instanceof OwnerConflictError)).toBe(true);
    expect((await state.get('runtime', OUT, 'a')).spec).toEqual({ by: 'AController' });
    expect((await state.get('runtime', OUT, 'b')).spec).toEqual({ by: 'BController' });
  });

  it('holds strong inputs with finalizers', async () => {
    const { state, rt } = setup();
    await state.create(input('a'), { owner: 'user' });
    rt.register({
      name: 'HolderController',
      inputs: [{ namespace: 'runtime', type: IN, kind: 'strong' }],
      outputs: [],
      async run(ctx) {
        for (const r of await ctx.state.list('runtime', IN)) {
          if (r.metadata.phase === 'running') await ctx.state.addFinalizer('runtime', IN, r.metadata.id, 'HolderController');
          else await ctx.state.removeFinalizer('runtime', IN, r.metadata.id, 'HolderController');
        }
      },
    });
    rt.start();
    await waitFor('finalizer', async () => (await state.get('runtime', IN, 'a')).metadata.finalizers.length === 1);
    await expect(state.destroy('runtime', IN, 'a', { owner: 'user' })).rejects.toThrow(/pending finalizers: HolderController/);
    await state.teardown('runtime', IN, 'a', { owner: 'user' });
    await waitFor('released', async () => (await state.get('runtime', IN, 'a')).metadata.finalizers.length === 0);
    await state.destroy('runtime', IN, 'a', { owner: 'user' });
  });

  it('runs again when asked with requeueAfter', async () => {
    const { rt } = setup();
    const times: number[] = [];
    rt.register({
      name: 'TickController',
      inputs: [],
      outputs: [],
      async run(ctx: ControllerContext) {
        times.push(Date.now());
        if (times.length < 3) {
          ctx.requeueAfter(300);
          ctx.requeueAfter(25); // the earliest wins; the others are dropped
          ctx.requeueAfter(400);
        }
      },
    });
    rt.start();
    await waitFor('three passes', () => times.length === 3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(23);
    expect(times[1]! - times[0]!).toBeLessThan(300);
    await sleep(60);
    expect(times).toHaveLength(3);
  });

  it('resyncs after its input watch overflows', async () => {
    const { state, rt, log } = setup({ queue: 2 });
    const { c, passes } = counter();
    rt.register(c);
    rt.start();
    await waitFor('first pass', () => passes.length === 1);
    // 20 writes in one tick overflow a queue of 2 before the runtime can read any of them.
    await Promise.all(Array.from({ length: 20 }, (_, i) => state.create(input(`r${i}`), { owner: '' })));
    await waitFor('count 20', async () => ((await state.get('runtime', OUT, 'count')).spec as { n: number }).n === 20);
    expect(log.lines.some((l) => /warn controller CountController: watch of runtime\/Inputs.bronze.dev ended .*watching again/.test(l))).toBe(true);
    await state.create(input('late'), { owner: '' });
    await waitFor('count 21', async () => ((await state.get('runtime', OUT, 'count')).spec as { n: number }).n === 21);
  });

  it('starts controllers registered after start', async () => {
    const { rt } = setup();
    rt.start();
    const { c, passes } = counter();
    rt.register(c);
    await waitFor('pass', () => passes.length === 1);
  });

  it('stops: aborts the signal, waits for the pass, leaves no watches', async () => {
    const { state, rt } = setup();
    let aborted = false;
    let passes = 0;
    rt.register({
      name: 'LongController',
      inputs: [{ namespace: 'runtime', type: IN, kind: 'weak' }],
      outputs: [],
      async run(ctx) {
        passes++;
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        aborted = true;
      },
    });
    rt.start();
    await waitFor('pass', () => passes === 1);
    expect(state.watcherCount()).toBe(1);
    await rt.stop();
    expect(aborted).toBe(true);
    expect(state.watcherCount()).toBe(0);
    await state.create(input('a'), { owner: '' });
    await sleep(20);
    expect(passes).toBe(1);
    expect(() => rt.register(counter('Late').c)).toThrow(/stopped/);
  });

  it('validates registrations', () => {
    const { rt } = setup();
    rt.register(counter('A').c);
    expect(() => rt.register(counter('A', { outputs: [] }).c)).toThrow('controller A is already registered');
    expect(() => rt.register(counter('B').c)).toThrow(`controller B cannot output ${OUT}: controller A outputs it exclusively`);
    expect(() => rt.register(counter('C', { outputs: [{ type: 'X.bronze.dev', kind: 'shared' }] }).c)).not.toThrow();
    expect(() => rt.register(counter('D', { outputs: [{ type: 'X.bronze.dev', kind: 'exclusive' }] }).c)).toThrow(
      /controller C outputs it \(shared, but this one asks for exclusive\)/,
    );
    expect(() => rt.register(counter('', {}).c)).toThrow('controller without a name');
    expect(() =>
      rt.register(
        counter('E', {
          outputs: [
            { type: 'Y.bronze.dev', kind: 'shared' },
            { type: 'Y.bronze.dev', kind: 'shared' },
          ],
        }).c,
      ),
    ).toThrow('declared twice');
    expect(() => rt.register(counter('F', { inputs: [{ namespace: '', type: IN, kind: 'weak' }], outputs: [] }).c)).toThrow(/input without/);
  });
});

describe('dependencies', () => {
  it('lists each controller’s declared inputs and outputs, in registration order, as copies', () => {
    const { rt } = setup();
    const run = async () => {};
    rt.register({ name: 'B', inputs: [{ namespace: 'config', type: IN, kind: 'strong' }], outputs: [{ type: OUT, kind: 'exclusive' }], run });
    rt.register({ name: 'A', inputs: [], outputs: [{ type: 'Shared.bronze.dev', kind: 'shared' }], run });
    const deps = rt.dependencies();
    expect(deps).toEqual([
      { name: 'B', inputs: [{ namespace: 'config', type: IN, kind: 'strong' }], outputs: [{ type: OUT, kind: 'exclusive' }] },
      { name: 'A', inputs: [], outputs: [{ type: 'Shared.bronze.dev', kind: 'shared' }] },
    ]);
    deps[0]!.inputs[0]!.type = 'changed';
    expect(rt.dependencies()[0]!.inputs[0]!.type).toBe(IN);
  });
});
