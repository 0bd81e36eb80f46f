// `bronzectl get` over cosi.resource.State against a real mTLS server: type resolution through the
// published resource definitions, print columns, yaml/json output, Get by id, watch, one call per
// node with `node` metadata, and a node without definitions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import YAML from 'yaml';
import { META_NAMESPACE } from '../../../src/contract/resources/namespace.ts';
import { DefinitionRegistry } from '../../../src/contract/resources/registry.ts';
import { RESOURCE_DEFINITION_TYPE } from '../../../src/contract/resources/resource-definition.ts';
import { cli, grpcError, makePki, startApi, workspace, type FakeApi, type Pki, type Workspace } from './testing.ts';

let pki: Pki;
let api: FakeApi;
let bare: FakeApi;
let ws: Workspace;

const T = { seconds: '1700000000', nanos: 0 };

function wire(namespace: string, type: string, id: string, version: number, spec: unknown) {
  return {
    metadata: { namespace, type, id, version: String(version), owner: 'ServiceController', phase: 'running', created: T, updated: T, labels: {}, annotations: {}, finalizers: [] },
    spec: { yaml_spec: YAML.stringify(spec), proto_spec: Buffer.alloc(0) },
  };
}

const registry = new DefinitionRegistry();
const definitions = registry.specs().map((d) => wire(META_NAMESPACE, RESOURCE_DEFINITION_TYPE, d.type.toLowerCase(), 1, d));

const services = (node: string) => [
  wire('runtime', 'Services.v1alpha1.talos.dev', 'apid', 3, { running: true, healthy: true, unknown: false }),
  wire('runtime', 'Services.v1alpha1.talos.dev', node === 'n2' ? 'trustd' : 'udevd', 1, { running: true, healthy: false, unknown: true }),
];

const nodeOf = (m: grpc.Metadata) => String(m.get('node')[0] ?? 'self');

beforeAll(async () => {
  pki = await makePki();
  api = await startApi(pki, {
    '/cosi.resource.State/List': {
      stream: (req, call) => {
        if (req.namespace === META_NAMESPACE && req.type === RESOURCE_DEFINITION_TYPE) {
          for (const d of definitions) call.write({ resource: d });
          return;
        }
        if (req.type !== 'Services.v1alpha1.talos.dev' || req.namespace !== 'runtime') throw grpcError(grpc.status.NOT_FOUND, `no resources of ${req.namespace}/${req.type}`);
        if (nodeOf(call.metadata) === 'down') throw grpcError(grpc.status.UNAVAILABLE, 'node down is unreachable');
        for (const r of services(nodeOf(call.metadata))) call.write({ resource: r });
      },
    },
    '/cosi.resource.State/Get': {
      unary: (req) => {
        const r = services('x').find((s) => s.metadata.id === req.id);
        if (!r) throw grpcError(grpc.status.NOT_FOUND, `resource ${req.type}/${req.id} not found`);
        return { resource: r };
      },
    },
    '/cosi.resource.State/Watch': {
      stream: async (req, call) => {
        const [a, b] = services(nodeOf(call.metadata));
        call.write({ event: [{ resource: a, event_type: 'CREATED' }, { resource: b, event_type: 'CREATED' }, { event_type: 'BOOTSTRAPPED' }] });
        await new Promise((r) => setTimeout(r, 20));
        call.write({ event: [{ resource: wire('runtime', req.type, 'apid', 4, { running: false, healthy: false, unknown: true }), event_type: 'UPDATED' }] });
        call.write({ event: [{ resource: b, event_type: 'DESTROYED' }] });
        await new Promise<void>((resolve) => call.on('cancelled', () => resolve()));
      },
    },
  });
  // A node that serves no resource definitions: types pass through as typed.
  bare = await startApi(pki, {
    '/cosi.resource.State/List': {
      stream: (req, call) => {
        if (req.namespace === META_NAMESPACE) throw grpcError(grpc.status.UNIMPLEMENTED, 'no definitions');
        call.write({ resource: wire(req.namespace || 'default', req.type, 'one', 7, { x: 1 }) });
      },
    },
  });
  ws = await workspace(pki, [api.endpoint]);
});

afterAll(async () => {
  await api.close();
  await bare.close();
  await ws.cleanup();
});

const calls = (p: string) => api.calls.filter((c) => c.path === p);

describe('get', () => {
  it('resolves an alias, uses the default namespace and the print columns, one row per node', async () => {
    const before = calls('/cosi.resource.State/List').length;
    const r = await cli(ws, ['-n', 'n1,n2', 'get', 'svc']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      'NODE   NAMESPACE   TYPE      ID       VERSION   RUNNING   HEALTHY   HEALTH UNKNOWN\n' +
        'n1     runtime     Service   apid     3         true      true      false\n' +
        'n1     runtime     Service   udevd    1         true      false     true\n' +
        'n2     runtime     Service   apid     3         true      true      false\n' +
        'n2     runtime     Service   trustd   1         true      false     true\n',
    );
    const made = calls('/cosi.resource.State/List').slice(before);
    // The definitions from the first node, then one List per node, each with `node` (never `nodes`).
    expect(made.map((c) => [c.request.namespace, c.request.type, c.node, c.nodes])).toEqual(
      expect.arrayContaining([
        [META_NAMESPACE, RESOURCE_DEFINITION_TYPE, ['n1'], []],
        ['runtime', 'Services.v1alpha1.talos.dev', ['n1'], []],
        ['runtime', 'Services.v1alpha1.talos.dev', ['n2'], []],
      ]),
    );
    expect(made).toHaveLength(3);
  });

  it('a node that fails is reported; the others are still shown', async () => {
    const r = await cli(ws, ['-n', 'n1,down', 'get', 'services']);
    expect(r.code).toBe(1);
    expect(r.out.split('\n').filter(Boolean)).toHaveLength(3);
    expect(r.err).toBe('down: rpc error: code = Unavailable desc = node down is unreachable\n');
  });

  it('get <type> <id> uses Get; a missing id is NotFound and exit 1', async () => {
    const r = await cli(ws, ['-n', 'n1', 'get', 'Service', 'apid', '-o', 'yaml']);
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      'node: n1\n' +
        'metadata:\n' +
        '    namespace: runtime\n' +
        '    type: Services.v1alpha1.talos.dev\n' +
        '    id: apid\n' +
        '    version: 3\n' +
        '    owner: ServiceController\n' +
        '    phase: running\n' +
        '    created: 2023-11-14T22:13:20.000Z\n' +
        '    updated: 2023-11-14T22:13:20.000Z\n' +
        'spec:\n' +
        '    running: true\n' +
        '    healthy: true\n' +
        '    unknown: false\n',
    );
    expect(calls('/cosi.resource.State/Get').at(-1)).toMatchObject({ request: { namespace: 'runtime', type: 'Services.v1alpha1.talos.dev', id: 'apid' }, node: ['n1'] });
    const missing = await cli(ws, ['-n', 'n1', 'get', 'svc', 'nope']);
    expect(missing).toMatchObject({ code: 1, out: '', err: 'n1: rpc error: code = NotFound desc = resource Services.v1alpha1.talos.dev/nope not found\n' });
  });

  it('-o json: one sorted, indented object per resource; yaml documents are separated', async () => {
    const r = await cli(ws, ['get', 'services', '-o', 'json']);
    const docs = r.out.split(/\n(?=\{)/).map((d) => JSON.parse(d));
    expect(docs).toHaveLength(2);
    expect(Object.keys(docs[0])).toEqual(['metadata', 'node', 'spec']);
    // NODE is the node (the endpoint's address), not the endpoint's host:port (issue 17).
    expect(docs[0]).toMatchObject({ node: '127.0.0.1', metadata: { id: 'apid', version: 3 }, spec: { running: true } });
    expect(r.out).toContain('\n    "metadata": {\n        "created"');
    const y = await cli(ws, ['get', 'services', '-o', 'yaml']);
    expect(y.out.split('\n---\n')).toHaveLength(2);
  });

  it('an unknown type names close matches and exits 1; an ambiguous one says so; a bad -o is a usage error', async () => {
    const r = await cli(ws, ['get', 'servics']);
    expect(r.code).toBe(1);
    expect(r.err).toBe('unknown resource type "servics"; did you mean service (Services.v1alpha1.talos.dev)?\n');
    const rs = await cli(ws, ['get', 'rs']);
    expect(rs).toMatchObject({ code: 1, err: 'resource type "rs" is ambiguous: resolverstatuses.net.talos.dev, routestatuses.net.talos.dev\n' });
    const o = await cli(ws, ['get', 'svc', '-o', 'xml']);
    expect(o.code).toBe(2);
    expect(o.err).toMatch(/option '-o, --output <format>' argument 'xml' is invalid. Allowed choices are table, yaml, json/);
  });

  it('--namespace overrides the default namespace', async () => {
    const r = await cli(ws, ['get', 'svc', '--namespace', 'other']);
    expect(r.code).toBe(1);
    expect(calls('/cosi.resource.State/List').at(-1)!.request).toMatchObject({ namespace: 'other', type: 'Services.v1alpha1.talos.dev' });
  });

  it('-w prints events with the +/-/space marker until SIGINT, then exits 0', async () => {
    const ac = new AbortController();
    const running = cli(ws, ['-n', 'n1', 'get', 'svc', '-w'], { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 200));
    ac.abort();
    const r = await running;
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NODE +\* +NAMESPACE +TYPE +ID +VERSION +RUNNING +HEALTHY +HEALTH UNKNOWN$/);
    expect(lines).toHaveLength(5);
    expect(lines[1]).toMatch(/^n1 +\+ +runtime +Service +apid +3 +true/);
    expect(lines[2]).toMatch(/^n1 +\+ +runtime +Service +udevd +1 /);
    expect(lines[3]).toMatch(/^n1 {9}runtime +Service +apid +4 +false/);
    expect(lines[4]).toMatch(/^n1 +- +runtime +Service +udevd +1 /);
    expect(calls('/cosi.resource.State/Watch').at(-1)).toMatchObject({
      node: ['n1'],
      request: { namespace: 'runtime', type: 'Services.v1alpha1.talos.dev', options: { bootstrap_contents: true }, api_version: 1 },
    });
  });

  it('without resource definitions the type is passed through and the base columns are shown', async () => {
    const r = await cli(ws, ['-e', bare.endpoint, 'get', 'Widgets.example.dev']);
    expect(r.code).toBe(0);
    expect(r.out).toBe('NODE        NAMESPACE   TYPE                  ID    VERSION\n127.0.0.1   default     Widgets.example.dev   one   7\n');
    expect(bare.calls.at(-1)!.request).toMatchObject({ namespace: '', type: 'Widgets.example.dev' });
  });

  it('-w prints the initial contents as one aligned table, then each change (issue 17: misaligned columns)', async () => {
    const ac = new AbortController();
    const running = cli(ws, ['-n', 'n1', 'get', 'svc', '-w'], { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 200));
    ac.abort();
    const r = await running;
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    // Every column starts where the header's does: the ID column is as wide as "udevd" in
    // every line, though "apid" came first.
    const header = lines[0]!;
    const idAt = header.indexOf(' ID ') + 1;
    const versionAt = header.indexOf('VERSION');
    for (const line of lines.slice(1)) {
      expect(line.slice(idAt, versionAt).trimEnd(), line).toMatch(/^(apid|udevd)$/);
      expect(line[versionAt - 1], line).toBe(' ');
      expect(line[versionAt], line).not.toBe(' ');
    }
  });
});

