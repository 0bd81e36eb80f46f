// RemoteState: the shared State conformance suite over the wire. Each case gets machined's real
// API server (cosi.resource.State included) on a fresh unix socket in a temporary directory,
// backed by a fresh MemoryState, and a RemoteState (a real grpc-js client) on that socket.
//
// The suite's two types are registered as test definitions. Which daemon may write which type
// is the server's rule, not the State's (resources.test.ts and remote-publisher.test.ts check
// it): the registry here lets every named writer write them, so that the suite checks the
// State's own rule, the per-resource owner.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ResourceDefinition } from '../contract/resources/definition.ts';
import { DefinitionRegistry, RESOURCE_DEFINITIONS } from '../contract/resources/registry.ts';
import { KmsgLogger } from '../lib/log.ts';
import { EventBus } from '../machined/api/events.ts';
import { type MachinedApi, startMachinedApi } from '../machined/api/server.ts';
import { Supervisor } from '../machined/supervisor/supervisor.ts';
import { MemoryState, type MemoryStateOptions } from '../state/memory.ts';
import { ConflictError, NotFoundError, newResource } from '../state/resource.ts';
import { stateConformance } from '../state/testing-conformance.ts';
import { RemoteState, UnsupportedOverWireError } from './remote-state.ts';

const testDefinition = (plural: string): ResourceDefinition => ({
  type: `${plural}.bronze.dev`,
  displayType: plural.slice(0, -1),
  aliases: [],
  defaultNamespace: 'runtime',
  owner: 'networkd',
  printColumns: [],
});

class SuiteRegistry extends DefinitionRegistry {
  override mayWrite(writer: string, type: string): boolean {
    return writer !== '' && this.get(type) !== undefined;
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-remote-state-'));
let serial = 0;
const open: Array<{ api: MachinedApi; client: RemoteState }> = [];

async function serve(opts: MemoryStateOptions = {}): Promise<{ state: MemoryState; client: RemoteState }> {
  const state = new MemoryState(opts);
  const api = await startMachinedApi({
    supervisor: new Supervisor([]),
    log: new KmsgLogger('test', false),
    events: new EventBus(),
    state,
    registry: new SuiteRegistry([...RESOURCE_DEFINITIONS, testDefinition('Tests'), testDefinition('Others')]),
    requestSequence: () => {},
    socket: path.join(dir, `machined-${++serial}.sock`),
  });
  const client = new RemoteState({ socket: api.socket, timeoutMs: 5000 });
  open.push({ api, client });
  return { state, client };
}

afterEach(async () => {
  for (const { api, client } of open.splice(0)) {
    client.close();
    await api.close();
  }
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

stateConformance('RemoteState', async (opts) => (await serve(opts)).client, { namelessWriter: false, lifecycle: false, boundedWatchQueue: false });

describe('RemoteState', () => {
  it('says plainly what the socket does not serve', async () => {
    const { client } = await serve();
    await client.create(newResource('runtime', 'Tests.bronze.dev', 'a', { n: 1 }), { owner: 'ctrl' });
    await expect(client.teardown('runtime', 'Tests.bronze.dev', 'a', { owner: 'ctrl' })).rejects.toBeInstanceOf(UnsupportedOverWireError);
    await expect(client.addFinalizer('runtime', 'Tests.bronze.dev', 'a', 'f')).rejects.toThrow(/addFinalizer is not served/);
    await expect(client.removeFinalizer('runtime', 'Tests.bronze.dev', 'a', 'f')).rejects.toBeInstanceOf(UnsupportedOverWireError);
  });

  it('reads what the State behind machined holds, with its metadata, and the errors as their classes', async () => {
    const { state, client } = await serve();
    const stored = await state.create(newResource('network', 'Tests.bronze.dev', 'eth0', { mtu: 1500 }, { labels: { up: 'true' } }), { owner: 'networkd' });
    expect(await client.get('network', 'Tests.bronze.dev', 'eth0')).toEqual(stored);
    expect(await client.list('network', 'Tests.bronze.dev', { labelSelector: 'up,!down' })).toEqual([stored]);
    await expect(client.get('network', 'Tests.bronze.dev', 'eth1')).rejects.toBeInstanceOf(NotFoundError);
    const err = await client.create(newResource('network', 'Tests.bronze.dev', 'eth0', {}), { owner: 'networkd' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as Error).message).toBe('resource network/Tests.bronze.dev/eth0: already exists');
  });

  it('is refused a nameless write, as machined refuses any', async () => {
    const { client } = await serve();
    await expect(client.create(newResource('runtime', 'Tests.bronze.dev', 'a', {}), { owner: '' })).rejects.toMatchObject({ details: 'resources are read-only through the API' });
  });
});
