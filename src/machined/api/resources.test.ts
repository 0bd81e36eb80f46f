import * as grpc from '@grpc/grpc-js';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { LINK_STATUS_TYPE } from '../../contract/resources/link-status.ts';
import { DefinitionRegistry, RESOURCE_DEFINITIONS } from '../../contract/resources/registry.ts';
import { publishDefinitions } from '../meta.ts';
import { MemoryState } from '../../state/memory.ts';
import { newResource } from '../../state/resource.ts';
import { ROLE_METADATA_KEY, matchTerm, resourceFilter, resourceHandlers, toWireResource } from './resources.ts';
import { callStream, callUnary, collect } from './testing.ts';

const SVC = 'Services.v1alpha1.talos.dev';

async function setup() {
  const state = new MemoryState();
  const registry = new DefinitionRegistry([
    ...RESOURCE_DEFINITIONS,
    { type: 'Secrets.bronze.dev', displayType: 'Secret', aliases: [], defaultNamespace: 'secrets', owner: 'machined', printColumns: [], sensitivity: 'sensitive' },
  ]);
  await publishDefinitions(state, registry);
  const put = (id: string, spec: unknown, labels: Record<string, string> = {}) =>
    state.create(newResource('runtime', SVC, id, spec, { labels }), { owner: 'ServiceController' });
  await put('apid', { running: true, healthy: true, unknown: false }, { tier: 'api', rank: '10' });
  await put('udevd', { running: true, healthy: false, unknown: true }, { tier: 'base', rank: '9' });
  return { state, registry, put, h: resourceHandlers({ state, registry }) };
}

describe('wire resources', () => {
  it('metadata with the version as a string, the spec as YAML and as its proto message', async () => {
    const { state, registry } = await setup();
    const r = await state.get('runtime', SVC, 'apid');
    const w = toWireResource(r, registry.get(SVC));
    expect(w.metadata).toMatchObject({ namespace: 'runtime', type: SVC, id: 'apid', version: '1', owner: 'ServiceController', phase: 'running', labels: { tier: 'api' } });
    expect(w.metadata!.created).toEqual({ seconds: Math.floor(r.metadata.created.getTime() / 1000), nanos: (r.metadata.created.getTime() % 1000) * 1e6 });
    expect(YAML.parse(w.spec!.yaml_spec!)).toEqual({ running: true, healthy: true, unknown: false });
    // ServiceSpec { running = 1, healthy = 2, unknown = 3 }: true, true, false (left out).
    expect([...(w.spec!.proto_spec as Buffer)]).toEqual([0x08, 1, 0x10, 1]);
  });

  it('a type without a definition goes as YAML only', async () => {
    const w = toWireResource(newResource('runtime', 'Others.bronze.dev', 'x', { a: 1 }), undefined);
    expect(w.spec).toEqual({ yaml_spec: 'a: 1\n', proto_spec: Buffer.alloc(0) });
  });
});

describe('label and id queries', () => {
  const labels = { tier: 'api', rank: '10' };
  it('COSI operations, with invert', () => {
    expect(matchTerm(labels, { key: 'tier', op: 'EXISTS' })).toBe(true);
    expect(matchTerm(labels, { key: 'tier', op: 'NOT_EXISTS' })).toBe(false);
    expect(matchTerm(labels, { key: 'tier', op: 'EQUAL', value: ['api'] })).toBe(true);
    expect(matchTerm(labels, { key: 'tier', op: 'EQUAL', value: ['api'], invert: true })).toBe(false);
    expect(matchTerm(labels, { key: 'tier', op: 'IN', value: ['base', 'api'] })).toBe(true);
    expect(matchTerm(labels, { key: 'rank', op: 'LT', value: ['9'] })).toBe(true); // as strings
    expect(matchTerm(labels, { key: 'rank', op: 'LT_NUMERIC', value: ['9'] })).toBe(false);
    expect(matchTerm(labels, { key: 'rank', op: 'LTE_NUMERIC', value: ['10'] })).toBe(true);
    expect(matchTerm(labels, { key: 'missing', op: 'LT', value: ['z'] })).toBe(false);
    expect(matchTerm(labels, { key: 'x', op: 1 as never })).toBe(false); // numeric enum: EQUAL
  });

  it('an invalid id regexp is INVALID_ARGUMENT', () => {
    expect(() => resourceFilter({ id_query: { regexp: '(' } })).toThrow(/invalid regular expression/);
  });
});

describe('cosi.resource.State handlers', () => {
  it('Get resolves aliases and defaults the namespace', async () => {
    const { h } = await setup();
    for (const type of ['svc', 'services', 'Service', SVC]) {
      const reply = await callUnary(h.Get, { namespace: '', type, id: 'apid' });
      expect(reply.resource.metadata).toMatchObject({ type: SVC, namespace: 'runtime', id: 'apid' });
    }
    await expect(callUnary(h.Get, { type: 'svc', id: 'nope' })).rejects.toMatchObject({ code: 5, message: expect.stringContaining('nope') });
    await expect(callUnary(h.Get, { type: 'servics', id: 'apid' })).rejects.toMatchObject({ code: 5, message: expect.stringContaining('did you mean') });
    await expect(callUnary(h.Get, { type: 'svc' })).rejects.toMatchObject({ code: 3 });
  });

  it('List streams one response per resource, filtered by label and id queries', async () => {
    const { h } = await setup();
    const ids = (msgs: Array<{ resource: { metadata: { id: string } } }>) => msgs.map((m) => m.resource.metadata.id);
    expect(ids(await collect(h.List, { namespace: 'runtime', type: 'svc' }))).toEqual(['apid', 'udevd']);
    expect(ids(await collect(h.List, { type: 'svc', options: { label_query: [{ terms: [{ key: 'tier', op: 'EQUAL', value: ['base'] }] }] } }))).toEqual(['udevd']);
    expect(ids(await collect(h.List, { type: 'svc', options: { id_query: { regexp: '^a' } } }))).toEqual(['apid']);
    expect(ids(await collect(h.List, { type: 'rd' }))).toContain('services.v1alpha1.talos.dev');
    expect(await collect(h.List, { namespace: 'other', type: 'svc' })).toEqual([]);
  });

  it('a local daemon may write the types it owns, and only those; apid callers never', async () => {
    const { h, state } = await setup();
    const md = (owner?: string, roles?: string) => {
      const m = new grpc.Metadata();
      if (owner) m.set('bronze-owner', owner);
      if (roles) m.set('bronze-role', roles);
      return m;
    };
    const spec = (mtu: number) => ({ index: 2, type: 'ether', linkIndex: 0, flags: 'UP', hardwareAddr: '', permanentAddr: '', broadcastAddr: '', mtu, queueDisc: '', operationalState: 'up', kind: '', slaveKind: '', linkState: true });
    const link = { metadata: { namespace: 'network', type: LINK_STATUS_TYPE, id: 'eth0', labels: { a: 'b' } }, spec: { yaml_spec: YAML.stringify(spec(1500)) } };
    await callUnary(h.Create, { resource: link }, md('networkd'));
    expect((await state.get('network', LINK_STATUS_TYPE, 'eth0')).spec).toEqual(spec(1500));
    await callUnary(h.Update, { new_resource: { ...link, spec: { yaml_spec: YAML.stringify(spec(9000)) } } }, md('networkd'));
    expect((await state.get('network', LINK_STATUS_TYPE, 'eth0')).spec).toEqual(spec(9000));
    await expect(callUnary(h.Update, { new_resource: link }, md('udevd'))).rejects.toMatchObject({ code: 7, message: expect.stringMatching(/udevd may not write LinkStatuses/) });
    await expect(callUnary(h.Create, { resource: link }, md('networkd', 'os:admin'))).rejects.toMatchObject({ code: 7, message: 'resources are read-only through the API' });
    await expect(callUnary(h.Create, { resource: { ...link, metadata: { ...link.metadata, type: SVC } } }, md('machined'))).rejects.toMatchObject({ code: 7 });
    await callUnary(h.Destroy, { namespace: 'network', type: LINK_STATUS_TYPE, id: 'eth0' }, md('networkd'));
    await expect(state.get('network', LINK_STATUS_TYPE, 'eth0')).rejects.toThrow(/not found/);
  });

  it('Update checks new_resource.metadata.version when set; a State error names itself in the bronze-state-error trailer', async () => {
    const { h, state } = await setup();
    await state.create(newResource('runtime', SVC, 'x', {}), { owner: 'networkd' });
    const registry = new DefinitionRegistry(RESOURCE_DEFINITIONS.map((d) => (d.type === SVC ? { ...d, owner: 'networkd' as const } : d)));
    const hn = resourceHandlers({ state, registry });
    const md = new grpc.Metadata();
    md.set('bronze-owner', 'networkd');
    const update = (version: string) =>
      new Promise<grpc.ServiceError | null>((resolve) =>
        hn.Update({ request: { new_resource: { metadata: { namespace: 'runtime', type: SVC, id: 'x', version }, spec: { yaml_spec: '{}' } } }, metadata: md } as never, (err) => resolve(err as grpc.ServiceError | null)),
      );
    expect(await update('1')).toBeNull();
    expect(await update('')).toBeNull(); // unset: no check
    const stale = await update('1');
    expect(stale).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, details: expect.stringMatching(/version is 3, expected 1/) });
    expect(JSON.parse(String(stale!.metadata.get('bronze-state-error')[0]))).toMatchObject({ name: 'ConflictError', reason: 'version', id: 'x' });
    expect(await update('two')).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    expect((await state.get('runtime', SVC, 'x')).metadata.version).toBe(3);
    await expect(callUnary(h.Get, { type: SVC, id: 'nope' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('proto_spec and YAML go to API callers (apid names their roles); local daemons get yaml_spec alone, as JSON (which YAML reads alike)', async () => {
    const { h, state } = await setup();
    const spec = { index: 2, type: 'ether', linkIndex: 0, flags: 'UP', hardwareAddr: '', permanentAddr: '', broadcastAddr: '', mtu: 1500, queueDisc: '', operationalState: 'up', kind: '', slaveKind: '', linkState: true };
    await state.create(newResource('network', LINK_STATUS_TYPE, 'eth0', spec), { owner: 'networkd' });
    const viaApid = new grpc.Metadata();
    viaApid.set(ROLE_METADATA_KEY, 'os:reader');
    const api = (await callUnary(h.Get, { type: LINK_STATUS_TYPE, id: 'eth0' }, viaApid)) as { resource: { spec: { proto_spec: Buffer; yaml_spec: string } } };
    expect(api.resource.spec.proto_spec.length).toBeGreaterThan(0);
    const local = (await callUnary(h.Get, { type: LINK_STATUS_TYPE, id: 'eth0' })) as typeof api;
    expect(local.resource.spec.proto_spec.length).toBe(0);
    expect(YAML.parse(local.resource.spec.yaml_spec)).toEqual(spec);
    expect(JSON.parse(local.resource.spec.yaml_spec)).toEqual(spec);
    expect(YAML.parse(api.resource.spec.yaml_spec)).toEqual(spec);
    expect(api.resource.spec.yaml_spec).toMatch(/^index: 2\ntype: ether\n/);
  });

  it('writes without a daemon owner are PERMISSION_DENIED', async () => {
    const { h } = await setup();
    for (const m of ['Create', 'Update', 'Destroy'] as const) {
      await expect(callUnary(h[m], {})).rejects.toEqual({ code: 7, message: 'resources are read-only through the API' });
    }
  });

  it('sensitive types: only os:admin when apid passes roles; local callers are trusted', async () => {
    const { h, state } = await setup();
    await state.create(newResource('secrets', 'Secrets.bronze.dev', 'ca', { key: 'k' }), { owner: 'x' });
    const md = (roles: string) => {
      const m = new grpc.Metadata();
      m.set(ROLE_METADATA_KEY, roles);
      return m;
    };
    await expect(callUnary(h.Get, { type: 'secret', id: 'ca' }, md('os:reader'))).rejects.toMatchObject({ code: 7 });
    await expect(collect(h.List, { type: 'secret' }, md('os:operator,os:reader'))).rejects.toMatchObject({ code: 7 });
    expect((await callUnary(h.Get, { type: 'secret', id: 'ca' }, md('os:admin'))).resource.metadata.id).toBe('ca');
    expect((await callUnary(h.Get, { type: 'secret', id: 'ca' })).resource.metadata.id).toBe('ca');
  });

  it('Watch of a kind: bootstrap (aggregated, BOOTSTRAPPED with api_version 1), then changes', async () => {
    const { h, state, put } = await setup();
    const s = callStream(h.Watch, { type: 'svc', options: { bootstrap_contents: true, aggregated: true }, api_version: 1 });
    await s.waitFor(1);
    expect(s.messages[0].event.map((e: { event_type: string; resource?: { metadata: { id: string } } }) => [e.event_type, e.resource?.metadata.id])).toEqual([
      ['CREATED', 'apid'],
      ['CREATED', 'udevd'],
      ['BOOTSTRAPPED', undefined],
    ]);
    const cur = await state.get('runtime', SVC, 'apid');
    await state.update({ ...cur, spec: { running: false, healthy: false, unknown: true } }, { owner: 'ServiceController' });
    await put('timed', { running: true, healthy: true, unknown: false });
    await state.destroy('runtime', SVC, 'udevd', { owner: 'ServiceController' });
    await s.waitFor(4);
    const [upd, created, destroyed] = s.messages.slice(1).map((m) => m.event[0]);
    expect(upd.event_type).toBe('UPDATED');
    expect(YAML.parse(upd.resource.spec.yaml_spec).running).toBe(false);
    expect(YAML.parse(upd.old.spec.yaml_spec).running).toBe(true);
    expect(created).toMatchObject({ event_type: 'CREATED', resource: { metadata: { id: 'timed' } } });
    expect(destroyed).toMatchObject({ event_type: 'DESTROYED', resource: { metadata: { id: 'udevd' } } });
    s.cancel();
    await s.done;
    expect(state.watcherCount()).toBe(0);
  });

  it('Watch of a kind without bootstrap_contents: changes only, no BOOTSTRAPPED', async () => {
    const { h, put } = await setup();
    const s = callStream(h.Watch, { type: 'svc', options: {}, api_version: 1 });
    await new Promise((r) => setTimeout(r, 10));
    expect(s.messages).toEqual([]);
    await put('timed', { running: true });
    await s.waitFor(1);
    expect(s.messages[0].event).toEqual([expect.objectContaining({ event_type: 'CREATED' })]);
    s.cancel();
    await s.done;
  });

  it('Watch of a kind with a label query: an update out of the selection is DESTROYED', async () => {
    const { h, state } = await setup();
    const s = callStream(h.Watch, { type: 'svc', options: { bootstrap_contents: true, label_query: [{ terms: [{ key: 'tier', op: 'EQUAL', value: ['api'] }] }] } });
    await s.waitFor(1);
    expect(s.messages[0].event[0].resource.metadata.id).toBe('apid');
    const cur = await state.get('runtime', SVC, 'apid');
    await state.update({ metadata: { ...cur.metadata, labels: { tier: 'moved' } }, spec: cur.spec }, { owner: 'ServiceController' });
    await s.waitFor(2);
    expect(s.messages[1].event[0]).toMatchObject({ event_type: 'DESTROYED', resource: { metadata: { id: 'apid' } } });
    s.cancel();
    await s.done;
  });

  it('Watch of one id: current state first, or a DESTROYED tombstone when absent', async () => {
    const { h, put } = await setup();
    const present = callStream(h.Watch, { type: 'svc', id: 'apid', api_version: 0 });
    await present.waitFor(1);
    expect(present.messages[0].event[0]).toMatchObject({ event_type: 'CREATED', resource: { metadata: { id: 'apid' } } });
    present.cancel();
    const absent = callStream(h.Watch, { type: 'svc', id: 'etcd', api_version: 1 });
    await absent.waitFor(2);
    expect(absent.messages.map((m) => m.event[0].event_type)).toEqual(['DESTROYED', 'BOOTSTRAPPED']);
    await put('etcd', { running: true });
    await absent.waitFor(3);
    expect(absent.messages[2].event[0]).toMatchObject({ event_type: 'CREATED', resource: { metadata: { id: 'etcd' } } });
    absent.cancel();
    await Promise.all([present.done, absent.done]);
  });

  it('Watch: a watcher that falls behind gets ERRORED and the call ends ABORTED', async () => {
    const state = new MemoryState({ watchQueueSize: 2 });
    const registry = new DefinitionRegistry();
    const h = resourceHandlers({ state, registry });
    const s = callStream(h.Watch, { type: 'svc', options: { bootstrap_contents: true }, api_version: 1 });
    while (state.watcherCount() === 0) await new Promise((r) => setImmediate(r));
    // The writes happen synchronously, before the handler can read any of them.
    for (let i = 0; i < 5; i++) void state.create(newResource('runtime', SVC, `s${i}`, {}), { owner: 'x' });
    await s.done;
    expect(s.messages.at(-1).event[0]).toMatchObject({ event_type: 'ERRORED', error: expect.stringContaining('fell more than 2 events behind') });
    expect(s.error).toMatchObject({ code: 10 });
  });

  it('Watch: tail_events is UNIMPLEMENTED', async () => {
    const { h } = await setup();
    await expect(collect(h.Watch, { type: 'svc', options: { tail_events: 5 } })).rejects.toMatchObject({ code: 12 });
  });
});
