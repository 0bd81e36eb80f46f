// The configuration commands: `validate` and `machineconfig patch` offline on temporary files;
// `patch mc` and `edit mc` against a real mTLS server serving the machineconfig resource (COSI Get,
// per node) and ApplyConfiguration (validating, recording, and keeping what it applied), with
// $EDITOR set to small shell scripts.
import { MACHINE_CONFIG_TYPE, machineConfigDefinition, type MachineConfigDocuments } from '../../../src/contract/resources/machine-config.ts';
import { protoSpec, yamlSpec } from '../../../src/contract/resources/wire.ts';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { generateConfigs } from '../../../src/contract/genconfig.ts';
import { generateSecrets } from '../../../src/contract/secrets.ts';
import { formatIssues, validateConfig } from '../../../src/config/validate.ts';
import { stripHeader } from '../../../src/bronzectl/commands/edit.ts';
import { cli, grpcError, makePki, startApi, workspace, type FakeApi, type Pki, type Workspace } from './testing.ts';

const TYPE = MACHINE_CONFIG_TYPE;
const T = { seconds: '1700000000', nanos: 0 };
const APPLY = '/machine.MachineService/ApplyConfiguration';
const GET = '/cosi.resource.State/Get';

let pki: Pki;
let api: FakeApi;
let ws: Workspace;
let worker: string;
/** Each node's running configuration, as the resource's text carries it (its documents). */
let specs: Map<string, MachineConfigDocuments>;

/** A node's machine section, as the fake node keeps it. */
const machineOf = (node: string) => (specs.get(node)!.data.v1alpha1 as { machine: { network: { hostname?: string }; sysctls?: unknown } }).machine;
const documentsOf = (node: string) => specs.get(node)!.data.documents;

const resolverDoc = { apiVersion: 'v1alpha1', kind: 'ResolverConfig', nameservers: [{ address: '1.1.1.1' }] };

function resetNodes(): void {
  const v1 = YAML.parse(worker) as Record<string, unknown>;
  specs = new Map([
    ['n1', { data: { v1alpha1: structuredClone(v1), documents: [] } }],
    ['n2', { data: { v1alpha1: structuredClone(v1), documents: [structuredClone(resolverDoc)] } }],
  ]);
}

const nodeOf = (m: grpc.Metadata) => String(m.get('node')[0] ?? 'n1');
const applies = () => api.calls.filter((c) => c.path === APPLY);
const data = (i: number) => Buffer.from(applies()[i]!.request.data).toString();

beforeAll(async () => {
  pki = await makePki();
  worker = generateConfigs({ clusterName: 'test', endpoint: '10.0.0.1', secrets: await generateSecrets() }).worker;
  api = await startApi(pki, {
    [GET]: {
      unary: (req, m) => {
        const node = nodeOf(m);
        if (node === 'down') throw grpcError(grpc.status.UNAVAILABLE, 'node down is unreachable');
        const spec = specs.get(node);
        if (req.namespace !== 'config' || req.type !== TYPE || req.id !== 'v1alpha1' || !spec) throw grpcError(grpc.status.NOT_FOUND, `resource ${req.type}/${req.id} not found`);
        return {
          resource: {
            metadata: { namespace: 'config', type: TYPE, id: 'v1alpha1', version: '3', owner: '', phase: 'running', created: T, updated: T, labels: {}, annotations: {}, finalizers: [] },
            // As Talos sends it: the configuration's text as one YAML string.
            spec: { yaml_spec: yamlSpec(machineConfigDefinition, spec), proto_spec: protoSpec(machineConfigDefinition, spec) },
          },
        };
      },
    },
    [APPLY]: {
      unary: (req, m) => {
        const node = nodeOf(m);
        const text = Buffer.from(req.data).toString();
        const v = validateConfig(text);
        if (!v.ok) throw grpcError(grpc.status.INVALID_ARGUMENT, formatIssues(v.errors));
        // A rule only the node knows: the test's way to make the node refuse a valid file.
        if (text.includes('refused.example')) throw grpcError(grpc.status.INVALID_ARGUMENT, 'machine.network.hostname: refused.example is taken');
        if (!req.dry_run) {
          const docs = YAML.parseAllDocuments(text).map((d) => d.toJS() as Record<string, unknown>);
          specs.set(node, { data: { v1alpha1: docs[0]!, documents: docs.slice(1) } });
        }
        const details = req.dry_run ? 'Dry run summary:\nApplied configuration without a reboot (skipped in dry-run).' : 'Applied configuration without a reboot';
        return { messages: [{ metadata: { hostname: node }, mode: req.mode, mode_details: details, warnings: [] }] };
      },
    },
  });
  ws = await workspace(pki, [api.endpoint]);
  await writeFile(path.join(ws.dir, 'worker.yaml'), worker);
});

beforeEach(() => {
  resetNodes();
  api.calls.length = 0;
});

afterAll(async () => {
  await api.close();
  await ws.cleanup();
});

/** A line number (1-based) of the first line of `text` containing `needle`. */
function lineOf(text: string, needle: string): number {
  return text.split('\n').findIndex((l) => l.includes(needle)) + 1;
}

describe('validate', () => {
  it('prints that a valid file is valid for metal mode', async () => {
    expect(await cli(ws, ['validate', '-c', 'worker.yaml'])).toMatchObject({ code: 0, out: 'worker.yaml is valid for metal mode\n', err: '' });
    expect(await cli(ws, ['validate', '--config', path.join(ws.dir, 'worker.yaml'), '--mode', 'metal'])).toMatchObject({ code: 0 });
  });

  it('lists every problem with its path and line, exit 1', async () => {
    const bad = worker.replace('  network: {}', '  network:\n    hostname: -bad-') + 'extra: 1\n';
    await writeFile(path.join(ws.dir, 'bad.yaml'), bad);
    const r = await cli(ws, ['validate', '-c', 'bad.yaml']);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    const lines = r.err.trimEnd().split('\n');
    expect(lines[0]).toBe('bad.yaml is not valid for metal mode: 2 errors:');
    expect(lines).toContainEqual(expect.stringContaining(`machine.network.hostname (line ${lineOf(bad, "-bad-")}): invalid: "-bad-" is not a valid hostname`));
    expect(lines).toContainEqual(expect.stringContaining(`extra (line ${lineOf(bad, "extra:")}): invalid: unknown field "extra"`));
  });

  it('refuses other modes and missing files', async () => {
    expect((await cli(ws, ['validate', '-c', 'worker.yaml', '--mode', 'cloud'])).code).toBe(2);
    expect((await cli(ws, ['validate'])).code).toBe(2);
    expect(await cli(ws, ['validate', '-c', 'nope.yaml'])).toMatchObject({ code: 1, err: 'nope.yaml: no such file\n' });
  });
});

describe('machineconfig patch', () => {
  it('applies inline and @file patches (strategic merge and RFC 6902) and prints the result', async () => {
    await writeFile(path.join(ws.dir, 'p.yaml'), 'machine:\n  network:\n    hostname: web-1\n');
    const r = await cli(ws, [
      'machineconfig',
      'patch',
      'worker.yaml',
      '--patch',
      '@p.yaml',
      '-p',
      '[{"op": "add", "path": "/machine/sysctls", "value": {"vm.swappiness": "10"}}]',
      '-p',
      'apiVersion: v1alpha1\nkind: TimeSyncConfig\nntp: {servers: [pool.ntp.org]}\n',
    ]);
    expect(r).toMatchObject({ code: 0, err: '' });
    const docs = YAML.parseAllDocuments(r.out).map((d) => d.toJS());
    expect(docs[0].machine.network).toEqual({ hostname: 'web-1' });
    expect(docs[0].machine.sysctls).toEqual({ 'vm.swappiness': '10' });
    expect(docs[1]).toEqual({ apiVersion: 'v1alpha1', kind: 'TimeSyncConfig', ntp: { servers: ['pool.ntp.org'] } });
    expect(validateConfig(r.out).ok).toBe(true);
  });

  it('writes -o as a 0600 file (alias mc)', async () => {
    const r = await cli(ws, ['mc', 'patch', 'worker.yaml', '-p', 'machine: {network: {hostname: web-2}}', '-o', 'out/patched.yaml']);
    expect(r).toMatchObject({ code: 0, out: '', err: '' });
    const out = path.join(ws.dir, 'out/patched.yaml');
    expect(YAML.parse(await readFile(out, 'utf8')).machine.network.hostname).toBe('web-2');
    expect((await stat(out)).mode & 0o777).toBe(0o600);
  });

  it('refuses an invalid result, listing the issues, and writes nothing', async () => {
    const r = await cli(ws, ['machineconfig', 'patch', 'worker.yaml', '-p', 'machine: {network: {hostname: -bad-}, bogus: 1}', '-o', 'invalid.yaml']);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^the patched configuration is not valid, nothing written: 2 errors:\n/);
    expect(r.err).toContain('machine.network.hostname (line');
    expect(r.err).toContain('machine.bogus (line');
    await expect(stat(path.join(ws.dir, 'invalid.yaml'))).rejects.toThrow(/ENOENT/);
  });

  it('reports patches that do not load or apply, and missing files', async () => {
    const del = await cli(ws, ['machineconfig', 'patch', 'worker.yaml', '-p', 'machine: {sysctls: {$patch: delete}}']);
    expect(del.code).toBe(1);
    expect(del.err).toMatch(/^patch 1 .*machine\.sysctls/);
    expect(await cli(ws, ['machineconfig', 'patch', 'worker.yaml', '-p', '@missing.yaml'])).toMatchObject({ code: 1, err: expect.stringMatching(/^@missing\.yaml: cannot read/) });
    expect(await cli(ws, ['machineconfig', 'patch', 'nope.yaml', '-p', 'machine: {}'])).toMatchObject({ code: 1, err: 'nope.yaml: no such file\n' });
    expect(await cli(ws, ['machineconfig', 'patch', 'worker.yaml'])).toMatchObject({ code: 1, err: expect.stringContaining('no patches') });
  });
});

describe('patch machineconfig', () => {
  it('patches every node: Get with node metadata, local patch, ApplyConfiguration with the mode', async () => {
    const r = await cli(ws, ['-n', 'n1,n2', 'patch', 'mc', '-p', 'machine: {network: {hostname: web}}', '--mode', 'no-reboot']);
    expect(r.code).toBe(0);
    expect(r.out.split('\n').sort()).toEqual(['', `patched ${TYPE}/v1alpha1 at the node n1`, `patched ${TYPE}/v1alpha1 at the node n2`]);
    expect(r.err).toContain('n1: Applied configuration without a reboot\n');
    expect(r.err).toContain('n2: Applied configuration without a reboot\n');
    const gets = api.calls.filter((c) => c.path === GET);
    expect(gets.map((c) => c.node[0]).sort()).toEqual(['n1', 'n2']);
    expect(gets[0]!.request).toMatchObject({ namespace: 'config', type: TYPE, id: 'v1alpha1' });
    expect(applies().map((c) => c.node[0]).sort()).toEqual(['n1', 'n2']);
    for (const c of applies()) expect(c.request).toMatchObject({ mode: 'NO_REBOOT', dry_run: false });
    expect(machineOf('n1').network.hostname).toBe('web');
    // n2's kind document went back with its v1alpha1 document, in one stream.
    expect(documentsOf('n2')).toEqual([resolverDoc]);
    const n2 = applies().findIndex((c) => c.node[0] === 'n2');
    expect(data(n2).split(/^---$/m)).toHaveLength(2);
  });

  it('passes --dry-run and the try timeout; a result equal to the running config is skipped', async () => {
    await writeFile(path.join(ws.dir, 'sysctl.yaml'), '- op: add\n  path: /machine/sysctls\n  value: {"net.ipv4.ip_forward": "1"}\n');
    const r = await cli(ws, ['-n', 'n1', 'patch', 'machineconfig', 'v1alpha1', '--patch-file', 'sysctl.yaml', '--mode', 'try', '--timeout', '90s', '--dry-run']);
    expect(r).toMatchObject({ code: 0 });
    expect(r.err).toContain('n1: Dry run summary:');
    expect(applies()[0]!.request).toMatchObject({ mode: 'TRY', dry_run: true, try_mode_timeout: { seconds: '90', nanos: 0 } });
    expect(YAML.parse(data(0)).machine.sysctls).toEqual({ 'net.ipv4.ip_forward': '1' });
    expect(machineOf('n1').sysctls).toBeUndefined();

    const same = await cli(ws, ['-n', 'n1', 'patch', 'mc', '-p', `cluster: {clusterName: test}`]);
    expect(same).toMatchObject({ code: 0, out: 'n1: apply was skipped: no changes detected\n' });
    expect(applies()).toHaveLength(1);
  });

  it('an invalid result changes nothing on the node and names it', async () => {
    const r = await cli(ws, ['-n', 'n1,n2', 'patch', 'mc', '-p', 'machine: {network: {hostname: -bad-}}']);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    for (const n of ['n1', 'n2']) expect(r.err).toContain(`${n}: the patched configuration is not valid, nothing applied: 1 error:\n  machine.network.hostname (line`);
    expect(applies()).toHaveLength(0);
  });

  it('one failing node does not stop the others; a patch that fails on one node names it', async () => {
    const r = await cli(ws, ['-n', 'n1,down', 'patch', 'mc', '-p', 'machine: {network: {hostname: web}}']);
    expect(r.code).toBe(1);
    expect(r.out).toBe(`patched ${TYPE}/v1alpha1 at the node n1\n`);
    expect(r.err).toContain('down: rpc error: code = Unavailable desc = node down is unreachable');
    expect(applies().map((c) => c.node[0])).toEqual(['n1']);

    // Only n2 has ResolverConfig nameservers to delete: on n1 the patch fails, naming the node.
    api.calls.length = 0;
    const del = await cli(ws, ['-n', 'n1,n2', 'patch', 'mc', '-p', 'apiVersion: v1alpha1\nkind: ResolverConfig\nnameservers: {$patch: delete}\n']);
    expect(del.code).toBe(1);
    expect(del.err).toMatch(/^n1: patch not applied: patch 1 .*ResolverConfig.*nothing to delete/m);
    expect(applies().map((c) => c.node[0])).toEqual(['n2']);
    expect(documentsOf('n2')).toEqual([{ apiVersion: 'v1alpha1', kind: 'ResolverConfig' }]);

    // Deleting a whole document a node does not have changes nothing there, as in Talos.
    api.calls.length = 0;
    const gone = await cli(ws, ['-n', 'n1', 'patch', 'mc', '-p', 'apiVersion: v1alpha1\nkind: ResolverConfig\n$patch: delete\n']);
    expect(gone.code, gone.err).toBe(0);
    expect(applies()).toEqual([]);
  });

  it('reports the node refusing the configuration', async () => {
    const r = await cli(ws, ['-n', 'n1', 'patch', 'mc', '-p', 'machine: {network: {hostname: refused.example}}']);
    expect(r).toMatchObject({ code: 1, out: '' });
    expect(r.err).toContain('n1: rpc error: code = InvalidArgument desc = machine.network.hostname: refused.example is taken');
  });

  it('refuses other resources, ids, bad patches and flag values before contacting any node', async () => {
    expect(await cli(ws, ['-n', 'n1', 'patch', 'services', '-p', 'machine: {}'])).toMatchObject({ code: 1, err: expect.stringContaining('only the machine configuration') });
    expect(await cli(ws, ['-n', 'n1', 'patch', 'mc', 'other', '-p', 'machine: {}'])).toMatchObject({ code: 1, err: expect.stringContaining('no such resource') });
    expect(await cli(ws, ['-n', 'n1', 'patch', 'mc', '-p', 'a: [1'])).toMatchObject({ code: 1, err: expect.stringContaining('malformed YAML') });
    expect(await cli(ws, ['-n', 'n1', 'patch', 'mc', '-p', 'machine: {}', '--timeout', 'soon'])).toMatchObject({ code: 1, err: expect.stringContaining('--timeout') });
    expect((await cli(ws, ['-n', 'n1', 'patch', 'mc', '-p', 'machine: {}', '--mode', 'later'])).code).toBe(2);
    expect(api.calls).toHaveLength(0);
  });
});

describe('edit machineconfig', () => {
  /** Writes an editor script; `body` gets the file as $1 and the workspace as $W. */
  async function editor(name: string, body: string): Promise<Record<string, string>> {
    const file = path.join(ws.dir, name);
    await writeFile(file, `#!/bin/sh\nW=${JSON.stringify(ws.dir)}\n${body}\n`);
    await chmod(file, 0o755);
    return { EDITOR: file, PATH: process.env.PATH ?? '/usr/bin:/bin' };
  }

  it('applies the edited configuration; the header tells what is edited', async () => {
    const env = await editor('ed-ok.sh', 'cp "$1" "$W/seen.yaml"\nsed -i "s/^  network: {}/  network:\\n    hostname: edited/" "$1"');
    const r = await cli(ws, ['-n', 'n1', 'edit', 'mc', '--mode', 'no-reboot'], { env });
    expect(r).toMatchObject({ code: 0, out: `edited ${TYPE}/v1alpha1 at the node n1\n`, err: 'n1: Applied configuration without a reboot\n' });
    expect(applies()).toHaveLength(1);
    expect(applies()[0]!.request).toMatchObject({ mode: 'NO_REBOOT', dry_run: false });
    expect(YAML.parse(data(0)).machine.network.hostname).toBe('edited');
    const seen = await readFile(path.join(ws.dir, 'seen.yaml'), 'utf8');
    expect(seen).toMatch(new RegExp(`^# Editing ${TYPE.replace(/\./g, '\\.')}/v1alpha1 at node n1\n`));
    expect(YAML.parse(stripHeader(seen))).toEqual(YAML.parse(worker));
  });

  it('an unchanged file cancels the edit: exit 0, nothing applied', async () => {
    const env = await editor('ed-same.sh', 'true');
    const r = await cli(ws, ['-n', 'n1,n2', 'edit', 'machineconfig'], { env });
    expect(r).toMatchObject({ code: 0, out: '', err: 'n1: edit cancelled, no changes made\nn2: edit cancelled, no changes made\n' });
    expect(applies()).toHaveLength(0);
  });

  it('an empty file cancels the edit', async () => {
    const env = await editor('ed-empty.sh', ': > "$1"');
    expect(await cli(ws, ['-n', 'n1', 'edit', 'mc'], { env })).toMatchObject({ code: 0, err: 'n1: edit cancelled, empty file\n' });
    expect(applies()).toHaveLength(0);
  });

  it('re-opens an invalid edit with the errors at the top, at the lines of the file being edited', async () => {
    // First open: break the hostname. Second: keep a copy, then fix it.
    const env = await editor(
      'ed-fix.sh',
      'if grep -q "not valid" "$1"; then cp "$1" "$W/reopened.yaml"; sed -i "s/hostname: -bad-/hostname: fixed/" "$1";\n' +
        'else sed -i "s/^  network: {}/  network:\\n    hostname: -bad-/" "$1"; fi',
    );
    const r = await cli(ws, ['-n', 'n2', 'edit', 'mc'], { env });
    expect(r).toMatchObject({ code: 0, out: `edited ${TYPE}/v1alpha1 at the node n2\n` });
    expect(applies()).toHaveLength(1);
    expect(machineOf('n2').network.hostname).toBe('fixed');
    expect(documentsOf('n2')).toEqual([resolverDoc]);
    const reopened = await readFile(path.join(ws.dir, 'reopened.yaml'), 'utf8');
    const m = /^#   machine\.network\.hostname \(line (\d+)\): invalid: "-bad-" is not a valid hostname/m.exec(reopened);
    expect(m).not.toBeNull();
    expect(reopened.split('\n')[Number(m![1]) - 1]).toBe('    hostname: -bad-');
  });

  it('re-opens on the node refusing the configuration; saving an invalid edit unchanged gives up (exit 1)', async () => {
    const env = await editor(
      'ed-refused.sh',
      'if grep -q "refused by the node" "$1"; then cp "$1" "$W/refused.yaml"; exit 0; fi\n' + 'sed -i "s/^  network: {}/  network:\\n    hostname: refused.example/" "$1"',
    );
    const r = await cli(ws, ['-n', 'n1', 'edit', 'mc'], { env });
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^n1: edit cancelled, the configuration is still not valid, nothing applied:\n {2}refused by the node: machine\.network\.hostname: refused\.example is taken\n$/);
    expect(await readFile(path.join(ws.dir, 'refused.yaml'), 'utf8')).toContain('#   refused by the node: machine.network.hostname: refused.example is taken\n');
    expect(applies()).toHaveLength(1);
    expect(machineOf('n1').network).toEqual({});
  });

  it('a failing editor or node is reported per node', async () => {
    const env = await editor('ed-fail.sh', 'exit 3');
    const r = await cli(ws, ['-n', 'down,n1', 'edit', 'mc'], { env });
    expect(r.code).toBe(1);
    expect(r.err).toContain('down: rpc error: code = Unavailable desc = node down is unreachable\n');
    expect(r.err).toMatch(/n1: editor ".*ed-fail\.sh" exited with status 3, nothing applied\n/);
    expect(applies()).toHaveLength(0);
  });
});
