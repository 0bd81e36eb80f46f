// `bronzectl image` against a real mTLS server serving machine.ImageService: talosctl's
// --namespace mapping, columns and messages, pull progress, an import streamed in chunks, and
// one call per node (`node` metadata: ImageService replies name no node).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceDefinition } from '../../contract/protos.ts';
import { cli, makePki, workspace, type Workspace } from '../../../test/unit/bronzectl/testing.ts';
import { containerdInstance, formatLabels, rfc3339 } from './image.ts';

const DIGEST = `sha256:${'ab'.repeat(32)}`;
const calls: Array<{ method: string; request: any; node: string[] }> = [];
const imported: Buffer[] = [];
let server: grpc.Server;
let ws: Workspace;

const err = (code: grpc.status, details: string) => ({ code, details });

beforeAll(async () => {
  const pki = await makePki();
  server = new grpc.Server();
  const node = (call: { metadata: grpc.Metadata }) => call.metadata.get('node').map(String);
  server.addService(serviceDefinition('machine.ImageService'), {
    List: (call: grpc.ServerWritableStream<any, any>) => {
      calls.push({ method: 'List', request: call.request, node: node(call) });
      call.write({ name: '10.0.2.2:5000/busybox:1', digest: DIGEST, size: 1_234_567, created_at: { seconds: 1_700_000_000, nanos: 0 }, labels: { b: '2', a: '1' } });
      call.end();
    },
    Pull: (call: grpc.ServerWritableStream<any, any>) => {
      calls.push({ method: 'Pull', request: call.request, node: node(call) });
      if (call.request.image_ref === 'nope:1') return call.emit('error', err(grpc.status.NOT_FOUND, 'error pulling image: nope:1: not found'));
      for (const offset of [0, 5 << 20, 10 << 20]) {
        call.write({ pull_progress: { layer_id: 'abababababab', progress: { status: offset === 10 << 20 ? 'DOWNLOAD_COMPLETE' : 'DOWNLOADING', offset, total: 10 << 20 } } });
      }
      call.write({ name: `10.0.2.2:5000/busybox@${DIGEST}` });
      call.end();
    },
    Import: (call: grpc.ServerReadableStream<any, any>, cb: grpc.sendUnaryData<any>) => {
      const msgs: any[] = [];
      call.on('data', (m) => msgs.push(m));
      call.on('end', () => {
        calls.push({ method: 'Import', request: msgs[0], node: node(call) });
        if (msgs[0]?.request !== 'containerd') return cb(err(grpc.status.INVALID_ARGUMENT, 'containerd instance is required'));
        imported.push(Buffer.concat(msgs.slice(1).map((m) => m.image_chunk.bytes)));
        cb(null, { name: 'import/busybox:1' });
      });
    },
    Remove: (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
      calls.push({ method: 'Remove', request: call.request, node: node(call) });
      if (call.request.image_ref === 'nope:1') return cb(err(grpc.status.NOT_FOUND, 'image nope:1 not found'));
      cb(null, {});
    },
    Verify: (_call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => cb(null, {}),
  });
  const creds = grpc.ServerCredentials.createSsl(Buffer.from(pki.ca.crt), [{ private_key: Buffer.from(pki.server.key), cert_chain: Buffer.from(pki.server.crt) }], true);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', creds, (e, p) => (e ? reject(e) : resolve(p))));
  ws = await workspace(pki, [`127.0.0.1:${port}`]);
});

afterAll(async () => {
  server?.forceShutdown();
  await ws?.cleanup();
});

const last = (method: string) => calls.filter((c) => c.method === method).at(-1)!;

describe('helpers', () => {
  it("talosctl's namespaces, times and labels", () => {
    expect(containerdInstance('cri')).toEqual({ driver: 'CRI', namespace: 'NS_CRI' });
    expect(containerdInstance('system')).toEqual({ driver: 'CRI', namespace: 'NS_SYSTEM' });
    expect(() => containerdInstance('inmem')).toThrow('unsupported namespace "inmem"');
    expect(rfc3339({ seconds: '1700000000', nanos: 5 })).toBe('2023-11-14T22:13:20Z');
    expect(formatLabels({ b: '2', a: '1' })).toBe('a=1,b=2');
    expect(formatLabels({})).toBe('');
  });
});

describe('image list', () => {
  it("talosctl's columns; --namespace cri by default, system on request (before or after the subcommand)", async () => {
    const r = await cli(ws, ['image', 'list']);
    expect(r.code).toBe(0);
    expect(last('List').request).toMatchObject({ containerd: { driver: 'CRI', namespace: 'NS_CRI' } });
    // No node named: the endpoint answers for itself, and NODE is its address without the port (issue 17), as `get` prints it.
    expect(r.out).toBe(
      ['NODE        IMAGE                     DIGEST                                                                    SIZE     LABELS    CREATED', `127.0.0.1   10.0.2.2:5000/busybox:1   ${DIGEST}   1.2 MB   a=1,b=2   2023-11-14T22:13:20Z`, ''].join('\n'),
    );
    await cli(ws, ['images', '--namespace', 'system', 'ls']);
    expect(last('List').request).toMatchObject({ containerd: { namespace: 'NS_SYSTEM' } });
    await cli(ws, ['image', 'ls', '--namespace', 'system']);
    expect(last('List').request).toMatchObject({ containerd: { namespace: 'NS_SYSTEM' } });
    expect((await cli(ws, ['image', '--namespace', 'inmem', 'ls'])).code).toBe(1);
  });

  it('calls each node on its own, with `node`', async () => {
    const r = await cli(ws, ['-n', 'n1,n2', 'image', 'list']);
    expect(r.code).toBe(0);
    expect(calls.slice(-2).map((c) => c.node).sort()).toEqual([['n1'], ['n2']]);
    expect(r.out.split('\n').filter((l) => l.startsWith('n')).map((l) => l.split(' ')[0]).sort()).toEqual(['n1', 'n2']);
    // Rows in the order the nodes were named, whichever answered first.
    const named = await cli(ws, ['-n', 'n2,n1', 'image', 'list']);
    expect(named.out.split('\n').filter((l) => l.startsWith('n')).map((l) => l.split(' ')[0])).toEqual(['n2', 'n1']);
  });
});

describe('image pull', () => {
  it('progress on stderr, the pinned name on stdout', async () => {
    const r = await cli(ws, ['-n', 'n1', 'image', 'pull', '10.0.2.2:5000/busybox:1']);
    expect(r.code).toBe(0);
    expect(last('Pull').request).toMatchObject({ image_ref: '10.0.2.2:5000/busybox:1', containerd: { driver: 'CRI', namespace: 'NS_CRI' } });
    expect(r.out).toBe(`n1: pulled image 10.0.2.2:5000/busybox@${DIGEST}\n`);
    const own = await cli(ws, ['image', 'pull', '10.0.2.2:5000/busybox:1']);
    expect(own.out).toBe(`127.0.0.1: pulled image 10.0.2.2:5000/busybox@${DIGEST}\n`);
    expect(r.err).toContain('n1: abababababab 0.0/10.0 MiB');
    expect(r.err).toContain('n1: abababababab 10.0/10.0 MiB');
  });

  it("a node's error fails the run, naming the node", async () => {
    const r = await cli(ws, ['-n', 'n1', 'image', 'pull', 'nope:1']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('n1: ');
    expect(r.err).toContain('nope:1: not found');
  });
});

describe('image import', () => {
  it('streams the archive after the containerd instance and prints the imported name', async () => {
    const file = path.join(ws.dir, 'busybox.tar');
    const data = Buffer.alloc(600 << 10, 7);
    await writeFile(file, data);
    const r = await cli(ws, ['-n', 'n1', 'image', 'import', file]);
    expect(r.code).toBe(0);
    expect(last('Import').request).toMatchObject({ request: 'containerd', containerd: { driver: 'CRI', namespace: 'NS_CRI' } });
    expect(imported.at(-1)!.equals(data)).toBe(true);
    expect(r.out).toBe(`n1: image imported import/busybox:1 from ${file}\n`);
    expect(r.err).toContain('n1: upload');
  });

  it('a missing file is the user\'s error', async () => {
    const r = await cli(ws, ['image', 'import', path.join(ws.dir, 'missing.tar')]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('failed to open image tarball');
  });

  it('a relative file is taken from the working directory; a directory is refused before any call', async () => {
    const data = Buffer.alloc(1000, 3);
    await writeFile(path.join(ws.dir, 'rel.tar'), data);
    const r = await cli(ws, ['-n', 'n1', 'image', 'import', 'rel.tar']);
    expect(r.code).toBe(0);
    expect(imported.at(-1)!.equals(data)).toBe(true);
    expect(r.out).toBe('n1: image imported import/busybox:1 from rel.tar\n');
    const before = calls.length;
    const dirArg = await cli(ws, ['-n', 'n1', 'image', 'import', '.']);
    expect(dirArg.code).toBe(1);
    expect(dirArg.err).toContain('failed to open image tarball: .: not a file');
    expect(calls.length).toBe(before);
  });
});

describe('image remove', () => {
  it('prints nothing on success; an unknown image fails naming it', async () => {
    expect(await cli(ws, ['image', 'rm', 'a:1'])).toMatchObject({ code: 0, out: '' });
    expect(last('Remove').request).toMatchObject({ image_ref: 'a:1', containerd: { namespace: 'NS_CRI' } });
    const r = await cli(ws, ['-n', 'n1', 'image', 'remove', 'nope:1']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('image nope:1 not found');
  });
});
