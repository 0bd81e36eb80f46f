// bronzectl never puts a port in `node`/`nodes` metadata (issue 50): -n (or a context's nodes)
// names nodes, which apid always reaches on their API port; an address with a port there is
// refused before anything is sent, with the way out. With --insecure, -n names the endpoint
// itself (maintenance mode), and a port there still works. The client library's metadata
// helpers refuse it too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { node, nodes } from '../../../src/client/index.ts';
import { cli, makePki, startApi, workspace, type FakeApi, type Pki, type Workspace } from './testing.ts';

let pki: Pki;
let api: FakeApi;
let ws: Workspace;

beforeAll(async () => {
  pki = await makePki();
  api = await startApi(pki, {
    '/machine.MachineService/Version': { unary: () => ({ messages: [{ version: { tag: 'v0.1.0' }, metadata: null }] }) },
    '/machine.MachineService/Memory': { unary: () => ({ messages: [{ meminfo: {}, metadata: null }] }) },
  });
  ws = await workspace(pki, [api.endpoint]);
});

afterAll(async () => {
  await api?.close();
  await ws?.cleanup();
});

const why = '(-n/--nodes name nodes, which are always reached on their API port; an address with a port is an endpoint: -e/--endpoints)';

describe('node names carry no port', () => {
  it('-n host:port is refused before any call, naming the value', async () => {
    const before = api.calls.length;
    expect(await cli(ws, ['-n', '10.5.0.2:50000', 'version'])).toMatchObject({ code: 1, err: `node metadata names a node, not an address with a port: 10.5.0.2:50000 ${why}\n` });
    expect(await cli(ws, ['-n', '10.5.0.2,[fd00::3]:22', 'memory'])).toMatchObject({ code: 1, err: `node metadata names a node, not an address with a port: [fd00::3]:22 ${why}\n` });
    // A per-node command (COSI) too.
    expect(await cli(ws, ['-n', 'cp1:2379', 'get', 'members'])).toMatchObject({ code: 1, err: `node metadata names a node, not an address with a port: cp1:2379 ${why}\n` });
    expect(api.calls.length).toBe(before);
  });

  it('a context node with a port is refused, naming the config file', async () => {
    const w = await workspace(pki, [api.endpoint], { nodes: ['10.5.0.2:50000'] });
    try {
      const r = await cli(w, ['version']);
      expect(r.code).toBe(1);
      expect(r.err).toBe(`node metadata names a node, not an address with a port: 10.5.0.2:50000 (the context's nodes (${w.config}) name nodes, which are always reached on their API port; an address with a port is an endpoint: -e/--endpoints)\n`);
    } finally {
      await w.cleanup();
    }
  });

  it('nodes named by host or IP (IPv6 with or without brackets) are sent as given', async () => {
    const r = await cli(ws, ['-n', '10.5.0.2,[fd00::3],fd00::4,cp1', 'version']);
    expect(r.code).toBe(0);
    expect(api.calls.at(-1)).toMatchObject({ path: '/machine.MachineService/Version', nodes: ['10.5.0.2', '[fd00::3]', 'fd00::4', 'cp1'] });
  });

  it('--insecure -n host:port is the endpoint, not node metadata, and still works', async () => {
    const maint = await startApi(pki, { '/machine.MachineService/ApplyConfiguration': { unary: () => ({ messages: [{ metadata: null, mode: 'REBOOT', mode_details: 'Applied' }] }) } }, { requireClientCert: false });
    try {
      await writeFile(path.join(ws.dir, 'cp.yaml'), 'version: v1alpha1\n');
      const r = await cli(ws, ['apply-config', '--insecure', '-n', maint.endpoint, '-f', 'cp.yaml']);
      expect(r).toMatchObject({ code: 0, err: `${maint.endpoint}: Applied\n` });
      expect(maint.calls[0]).toMatchObject({ node: [], nodes: [] });
    } finally {
      await maint.close();
    }
  });

  it('the client library refuses a port in node metadata', () => {
    expect(() => node('10.5.0.2:50000')).toThrow('node metadata names a node, not an address with a port: 10.5.0.2:50000');
    expect(() => nodes(['a', 'b:1'])).toThrow('node metadata names a node, not an address with a port: b:1');
    expect(node('[fd00::2]').get('node')).toEqual(['[fd00::2]']);
  });
});
