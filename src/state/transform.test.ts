// transformController in a real ControllerRuntime over a MemoryState.

import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../lib/log.ts';
import { ControllerRuntime, registerControllers } from './controller.ts';
import { MemoryState } from './memory.ts';
import { NotFoundError, type Resource, newResource } from './resource.ts';
import { transformController } from './transform.ts';

const IN = 'Inputs.bronze.dev';
const OUT = 'Outputs.bronze.dev';
const NAME = 'OutputController';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, timeout = 3000): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

interface InSpec {
  value: number;
  skip?: boolean;
}

const runtimes: ControllerRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((rt) => rt.stop()));
});

function setup(extra: { outputId?: (r: Resource<InSpec>) => string } = {}) {
  const state = new MemoryState();
  const errors: string[] = [];
  const log: Logger = { info() {}, warn() {}, error: (m) => errors.push(m) };
  const rt = new ControllerRuntime(state, { log, backoffBase: 10 });
  runtimes.push(rt);
  rt.register(
    transformController<InSpec, { doubled: number }>({
      name: NAME,
      input: { namespace: 'config', type: IN },
      output: { namespace: 'runtime', type: OUT },
      map: (r) => (r.spec.skip ? undefined : { doubled: r.spec.value * 2 }),
      labels: (r) => ({ from: r.metadata.id }),
      ...extra,
    }),
  );
  const out = async (id: string) => {
    try {
      return await state.get<{ doubled: number }>('runtime', OUT, id);
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  };
  const put = (id: string, spec: InSpec) => state.create(newResource('config', IN, id, spec), { owner: 'user' });
  const set = async (id: string, spec: InSpec) => {
    const cur = await state.get('config', IN, id);
    return state.update({ ...cur, spec }, { owner: 'user' });
  };
  return { state, rt, out, put, set, errors };
}

describe('transformController', () => {
  it('creates an output per input, with the same id, mapped spec, labels and the controller as owner', async () => {
    const { rt, out, put } = setup();
    await put('a', { value: 1 });
    rt.start();
    await waitFor('output a', async () => (await out('a')) !== undefined);
    const a = (await out('a'))!;
    expect(a.spec).toEqual({ doubled: 2 });
    expect(a.metadata).toMatchObject({ owner: NAME, labels: { from: 'a' }, version: 1, namespace: 'runtime' });
    await put('b', { value: 5 });
    await waitFor('output b', async () => (await out('b'))?.spec.doubled === 10);
  });

  it('updates outputs whose mapping changed and leaves the others at their version', async () => {
    const { rt, out, put, set } = setup();
    await put('a', { value: 1 });
    await put('b', { value: 2 });
    rt.start();
    await waitFor('outputs', async () => (await out('b')) !== undefined && (await out('a')) !== undefined);
    await set('a', { value: 7 });
    await waitFor('a updated', async () => (await out('a'))?.spec.doubled === 14);
    expect((await out('a'))!.metadata.version).toBe(2);
    await sleep(20);
    expect((await out('b'))!.metadata.version).toBe(1);
  });

  it('destroys the output when the input is destroyed, tears down, or maps to nothing', async () => {
    const { state, rt, out, put, set } = setup();
    for (const id of ['a', 'b', 'c']) await put(id, { value: 1 });
    rt.start();
    await waitFor('outputs', async () => (await state.list('runtime', OUT)).length === 3);
    await state.destroy('config', IN, 'a', { owner: 'user' });
    await state.teardown('config', IN, 'b', { owner: 'user' });
    await set('c', { value: 1, skip: true });
    await waitFor('all gone', async () => (await state.list('runtime', OUT)).length === 0);
    await set('c', { value: 3 });
    await waitFor('c back', async () => (await out('c'))?.spec.doubled === 6);
  });

  it('waits for finalizers on an output before destroying it, then recreates it when wanted again', async () => {
    const { state, rt, out, put } = setup();
    await put('a', { value: 1 });
    rt.start();
    await waitFor('output', async () => (await out('a')) !== undefined);
    await state.addFinalizer('runtime', OUT, 'a', 'consumer');
    await state.destroy('config', IN, 'a', { owner: 'user' });
    await waitFor('tearing down', async () => (await out('a'))?.metadata.phase === 'tearingDown');
    await sleep(20);
    expect((await out('a'))?.metadata.phase).toBe('tearingDown');
    await put('a', { value: 4 }); // wanted again, but still held
    await sleep(20);
    expect((await out('a'))?.metadata.phase).toBe('tearingDown');
    await state.removeFinalizer('runtime', OUT, 'a', 'consumer');
    await waitFor('recreated', async () => {
      const r = await out('a');
      return r?.metadata.phase === 'running' && r.spec.doubled === 8;
    });
    expect((await out('a'))!.metadata.version).toBe(1);
  });

  it('leaves outputs it does not own alone', async () => {
    const { state, rt, put } = setup();
    await state.create(newResource('runtime', OUT, 'foreign', { doubled: 0 }), { owner: 'someone' });
    await put('a', { value: 1 });
    rt.start();
    await waitFor('output', async () => (await state.list('runtime', OUT)).length === 2);
    await sleep(20);
    expect((await state.get('runtime', OUT, 'foreign')).metadata.version).toBe(1);
  });

  it('maps to other ids, and fails (with backoff) when two inputs want the same output', async () => {
    const { rt, out, put, state, errors } = setup({ outputId: () => 'singleton' });
    await put('a', { value: 1 });
    rt.start();
    await waitFor('singleton', async () => (await out('singleton'))?.spec.doubled === 2);
    await put('b', { value: 2 });
    await waitFor('error', () => errors.length > 0);
    expect(errors[0]).toMatch(/inputs config\/Inputs.bronze.dev\/a and config\/Inputs.bronze.dev\/b both map to output id "singleton"/);
    await state.destroy('config', IN, 'a', { owner: 'user' });
    await waitFor('recovered', async () => (await out('singleton'))?.spec.doubled === 4);
  });

  it('chains: A → B → C', async () => {
    const state = new MemoryState();
    const rt = new ControllerRuntime(state, { backoffBase: 10 });
    runtimes.push(rt);
    registerControllers(rt, [
      transformController<{ n: number }, { n: number }>({
        name: 'BController',
        input: { namespace: 'config', type: 'As.bronze.dev' },
        output: { namespace: 'runtime', type: 'Bs.bronze.dev' },
        map: (r) => ({ n: r.spec.n + 1 }),
      }),
      transformController<{ n: number }, { n: number }>({
        name: 'CController',
        input: { namespace: 'runtime', type: 'Bs.bronze.dev' },
        output: { namespace: 'runtime', type: 'Cs.bronze.dev' },
        map: (r) => ({ n: r.spec.n * 10 }),
      }),
    ]);
    rt.start();
    await state.create(newResource('config', 'As.bronze.dev', 'x', { n: 1 }), { owner: '' });
    await waitFor('C', async () => (await state.list<{ n: number }>('runtime', 'Cs.bronze.dev'))[0]?.spec.n === 20);
    await state.destroy('config', 'As.bronze.dev', 'x', { owner: '' });
    await waitFor('C gone', async () => (await state.list('runtime', 'Cs.bronze.dev')).length === 0);
  });

  it('refuses an output equal to its input', () => {
    expect(() =>
      transformController({ name: 'X', input: { namespace: 'a', type: IN }, output: { namespace: 'a', type: IN }, map: () => ({}) }),
    ).toThrow(/input and output are both a\/Inputs.bronze.dev/);
  });
});
