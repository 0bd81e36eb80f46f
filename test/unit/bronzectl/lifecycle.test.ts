// bronzectl upgrade, install, rollback and reset against a real mTLS server: what goes on the
// wire (the upload's bytes and chunking, routing metadata, flags → request fields), what is
// printed (progress on stderr, a line per stage or tenth; the outcome on stdout) and the exit
// codes.
import crypto from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, grpcError, makePki, md, startApi, workspace, type FakeApi, type Pki, type Workspace } from './testing.ts';

const MiB = 1 << 20;

let pki: Pki;
let api: FakeApi;
let ws: Workspace;

/** What the fake node received over UpgradeStream. */
interface Received {
  first: { request: { image: string; preserve: boolean; stage: boolean; force: boolean }; size: string };
  chunks: number[];
  sha256: string;
}
const received: Received[] = [];

const lastCall = (p: string) => api.calls.filter((c) => c.path === p).at(-1)!;

beforeAll(async () => {
  pki = await makePki();
  api = await startApi(pki, {
    '/machine.MachineService/UpgradeStream': {
      bidi: async (call) => {
        const node = String(call.metadata.get('node')[0] ?? '');
        const stamp = node ? md(node) : null;
        const hash = crypto.createHash('sha256');
        let first: Received['first'] | undefined;
        const chunks: number[] = [];
        let bytes = 0;
        // (not `for await (const m of call)`: leaving it early would destroy the call, status and all)
        for await (const m of call.iterator({ destroyOnReturn: false })) {
          if (!first) {
            first = m;
            if (m.request.image === 'https://images.example/unsigned.tar') {
              throw grpcError(grpc.status.INVALID_ARGUMENT, 'upgrade image refused, nothing was written: bad signature');
            }
            continue;
          }
          hash.update(m.chunk);
          chunks.push(m.chunk.length);
          bytes += m.chunk.length;
          call.write({ metadata: stamp, stage: 'receive', message: 'upload', done: String(bytes), total: String(first.size) });
        }
        received.push({ first: first!, chunks, sha256: hash.digest('hex') });
        if (first!.request.image === 'https://images.example/slow.tar') {
          call.write({ metadata: stamp, stage: 'download', message: 'slow', done: '1', total: String(10 * MiB) });
          return new Promise<void>((resolve) => call.on('cancelled', () => resolve()));
        }
        const from = first!.request.image || 'upload';
        if (first!.request.image) call.write({ metadata: stamp, stage: 'download', message: from, done: '0', total: String(3 * MiB) });
        call.write({ metadata: stamp, stage: 'verify', message: 'signature and checksums good: Bronze v0.2.0 (amd64)' });
        call.write({ metadata: stamp, stage: 'write', message: 'slot B: Bronze v0.2.0', done: '0', total: '0' });
        call.write({ metadata: stamp, stage: 'reboot', message: 'upgrade done: rebooting (actor id a-1)' });
      },
    },
    '/machine.MachineService/Install': {
      stream: async (req, call) => {
        const stamp = md(String(call.metadata.get('node')[0] ?? 'self'));
        if (req.disk === '/dev/vda') throw grpcError(grpc.status.FAILED_PRECONDITION, '/dev/vda holds data: install with wipe to overwrite it');
        for (const stage of ['partition', 'format', 'write', 'bootloader']) call.write({ metadata: stamp, stage, message: req.disk });
        call.write({ metadata: stamp, stage: 'reboot', message: 'install done: rebooting (actor id i-1)' });
      },
    },
    '/machine.MachineService/Repair': {
      stream: async (req, call) => {
        const stamp = md(String(call.metadata.get('node')[0] ?? 'self'));
        if (req.labels.includes('EPHEMERAL')) throw grpcError(grpc.status.DATA_LOSS, 'repair of EPHEMERAL (/dev/vda6) failed: xfs_repair exited with 1');
        if (req.zero_log && req.labels.includes('STATE')) {
          // The node says it reboots, and its network goes before the stream's end gets out: silence.
          call.write({ metadata: stamp, stage: 'reboot', message: 'repair done: rebooting (actor id p-2)' });
          return new Promise<void>((resolve) => call.on('cancelled', () => resolve()));
        }
        call.write({ metadata: stamp, stage: 'repair', message: 'STATE (/dev/vda5): xfs_repair' });
        call.write({ metadata: stamp, stage: 'repair', message: 'STATE: Phase 1 - find and verify superblock...' });
        call.write({ metadata: stamp, stage: 'verify', message: 'STATE (/dev/vda5) mounts again and holds a machine configuration' });
        call.write({ metadata: stamp, stage: 'reboot', message: 'repair done: rebooting (actor id p-1)' });
      },
    },
    '/machine.MachineService/Rollback': {
      unary: (_r, m) => ({ messages: m.get('nodes').flatMap((v) => String(v).split(',')).map((n) => (n.trim() === 'node03' ? { metadata: md('node03', 'cannot roll back: slot A holds no image') } : { metadata: md(n.trim()) })) }),
    },
    '/machine.MachineService/Reset': { unary: () => ({ messages: [{ metadata: md('n1'), actor_id: 'r-1' }] }) },
  });
  ws = await workspace(pki, [api.endpoint]);
});

afterAll(async () => {
  await api.close();
  await ws.cleanup();
});

describe('upgrade', () => {
  it('sends a local image in 1 MiB chunks, intact, to the one node named; prints progress by tenths and the outcome', async () => {
    const image = crypto.randomBytes(7 * MiB + 4321);
    await writeFile(path.join(ws.dir, 'upgrade.tar'), image);
    const r = await cli(ws, ['-n', 'n1', 'upgrade', '--image', 'upgrade.tar', '--preserve']);
    expect(r.code, r.err).toBe(0);
    const got = received.at(-1)!;
    expect(got.first).toMatchObject({ request: { image: '', preserve: true, stage: false, force: false }, size: String(image.length) });
    expect(got.sha256).toBe(crypto.createHash('sha256').update(image).digest('hex'));
    expect(got.chunks.slice(0, -1).every((n) => n === MiB)).toBe(true);
    expect(got.chunks.length).toBe(8);
    expect(lastCall('/machine.MachineService/UpgradeStream')).toMatchObject({ node: ['n1'], nodes: [] });
    const lines = r.err.trimEnd().split('\n');
    expect(lines[0]).toBe('upload 0.0/7.0 MiB');
    expect(lines.filter((l) => l.startsWith('upload ')).length).toBeLessThanOrEqual(11);
    expect(lines.at(-3)).toBe('upload 7.0/7.0 MiB');
    expect(lines.slice(-2)).toEqual(['verify: signature and checksums good: Bronze v0.2.0 (amd64)', 'write: slot B: Bronze v0.2.0']);
    expect(r.err).not.toMatch(/receive/); // the node's own count of the upload is not repeated
    expect(r.out).toBe('n1: upgrade done: rebooting (actor id a-1)\n');
  });

  it('passes an http(s) URL to the node, which fetches it', async () => {
    const r = await cli(ws, ['-n', 'n1', 'upgrade', '-i', 'https://images.example/bronze.tar', '--stage', '-f']);
    expect(r.code, r.err).toBe(0);
    expect(received.at(-1)).toMatchObject({ first: { request: { image: 'https://images.example/bronze.tar', stage: true, force: true }, size: '0' }, chunks: [] });
    expect(r.err).toBe('download 0.0/3.0 MiB: https://images.example/bronze.tar\nverify: signature and checksums good: Bronze v0.2.0 (amd64)\nwrite: slot B: Bronze v0.2.0\n');
    expect(r.out).toBe('n1: upgrade done: rebooting (actor id a-1)\n');
  });

  it('a missing file or directory is named; several nodes are refused; the node\'s error fails the run', async () => {
    expect(await cli(ws, ['-n', 'n1', 'upgrade', '--image', 'nope.tar'])).toMatchObject({
      code: 1,
      err: 'nope.tar: no such file (give an upgrade image file, or an http:// or https:// URL)\n',
    });
    await mkdir(path.join(ws.dir, 'adir'), { recursive: true });
    expect(await cli(ws, ['-n', 'n1', 'upgrade', '--image', 'adir'])).toMatchObject({ code: 1, err: expect.stringMatching(/^adir: not a file/) });
    expect(await cli(ws, ['-n', 'n1,n2', 'upgrade', '--image', 'https://images.example/bronze.tar'])).toMatchObject({
      code: 1,
      err: 'upgrade works on one node at a time, but 2 are given (n1, n2): pass one with -n/--nodes\n',
    });
    const bad = await cli(ws, ['-n', 'n1', 'upgrade', '--image', 'https://images.example/unsigned.tar']);
    expect(bad).toMatchObject({ code: 1, out: '', err: 'n1: rpc error: code = InvalidArgument desc = upgrade image refused, nothing was written: bad signature\n' });
    expect(await cli(ws, ['upgrade'])).toMatchObject({ code: 2, err: expect.stringContaining("required option '-i, --image <url|file>' not specified") });
  });

  it('Ctrl-C cancels the upgrade and fails the run', async () => {
    const ac = new AbortController();
    const run = cli(ws, ['-n', 'n1', 'upgrade', '--image', 'https://images.example/slow.tar'], { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 200));
    ac.abort();
    const r = await run;
    expect(r).toMatchObject({ code: 1, out: '', err: 'download 0.0/10.0 MiB: slow\nn1: upgrade cancelled\n' });
  });
});

describe('install', () => {
  it('sends the flags (kernel arguments repeatable, never split on commas) and prints each stage', async () => {
    const r = await cli(ws, ['-n', 'n1', 'install', '--disk', '/dev/sdb', '--wipe', '--extra-kernel-arg', 'console=ttyS0,115200', '--extra-kernel-arg', 'quiet']);
    expect(r.code, r.err).toBe(0);
    expect(lastCall('/machine.MachineService/Install')).toMatchObject({
      node: ['n1'],
      request: { disk: '/dev/sdb', wipe: true, image: '', extra_kernel_args: ['console=ttyS0,115200', 'quiet'] },
    });
    expect(r.err).toBe('partition: /dev/sdb\nformat: /dev/sdb\nwrite: /dev/sdb\nbootloader: /dev/sdb\n');
    expect(r.out).toBe('n1: install done: rebooting (actor id i-1)\n');
  });

  it('--disk is required; the node\'s refusal fails the run', async () => {
    expect(await cli(ws, ['install'])).toMatchObject({ code: 2, err: expect.stringContaining("required option '--disk <path>' not specified") });
    expect(await cli(ws, ['-n', 'n1', 'install', '--disk', '/dev/vda'])).toMatchObject({
      code: 1,
      err: 'n1: rpc error: code = FailedPrecondition desc = /dev/vda holds data: install with wipe to overwrite it\n',
    });
  });
});

describe('repair', () => {
  it('sends the labels (upper case, comma-separated or not), prints the steps, and the outcome', async () => {
    const r = await cli(ws, ['-n', 'n1', 'repair', 'state']);
    expect(r.code, r.err).toBe(0);
    expect(lastCall('/machine.MachineService/Repair')).toMatchObject({ node: ['n1'], request: { labels: ['STATE'], zero_log: false } });
    expect(r.err).toBe('repair: STATE (/dev/vda5): xfs_repair\nrepair: STATE: Phase 1 - find and verify superblock...\nverify: STATE (/dev/vda5) mounts again and holds a machine configuration\n');
    expect(r.out).toBe('n1: repair done: rebooting (actor id p-1)\n');
    await cli(ws, ['-n', 'n1', 'repair', 'STATE,EPHEMERAL', '--zero-log']);
    expect(lastCall('/machine.MachineService/Repair').request).toEqual({ labels: ['STATE', 'EPHEMERAL'], zero_log: true });
  });

  it('once the node said it reboots, a stream whose end never comes is done after a grace period', async () => {
    const t0 = Date.now();
    const r = await cli(ws, ['-n', 'n1', 'repair', 'STATE', '--zero-log'], { env: { BRONZECTL_REBOOT_GRACE_MS: '300' } });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('n1: repair done: rebooting (actor id p-2)\n');
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('a failed repair fails the run; no label is a usage error', async () => {
    expect(await cli(ws, ['-n', 'n1', 'repair', 'EPHEMERAL'])).toMatchObject({ code: 1, err: expect.stringContaining('n1: rpc error: code = DataLoss desc = repair of EPHEMERAL (/dev/vda6) failed') });
    expect((await cli(ws, ['repair'])).code).toBe(2);
  });
});

describe('rollback and reset', () => {
  it('rollback fans out and prints nothing on success; a failing node is named', async () => {
    expect(await cli(ws, ['-n', 'n1,n2', 'rollback'])).toMatchObject({ code: 0, out: '', err: '' });
    expect(lastCall('/machine.MachineService/Rollback').nodes).toEqual(['n1', 'n2']);
    expect(await cli(ws, ['-n', 'n1,node03', 'rollback'])).toMatchObject({ code: 1, err: 'node03: cannot roll back: slot A holds no image\n' });
  });

  it('reset: talosctl defaults (graceful, power off, every wipeable label)', async () => {
    expect(await cli(ws, ['-n', 'n1', 'reset'])).toMatchObject({ code: 0, out: '', err: '' });
    expect(lastCall('/machine.MachineService/Reset')).toMatchObject({
      nodes: ['n1'],
      request: { graceful: true, reboot: false, system_partitions_to_wipe: [] },
    });
  });

  it('reset: --graceful=false, --reboot, labels repeated or comma-separated (deduplicated, upper case)', async () => {
    expect((await cli(ws, ['-n', 'n1', 'reset', '--graceful=false', '--reboot', '--system-labels-to-wipe', 'STATE,ephemeral', '--system-labels-to-wipe', 'STATE'])).code).toBe(0);
    expect(lastCall('/machine.MachineService/Reset').request).toMatchObject({
      graceful: false,
      reboot: true,
      system_partitions_to_wipe: [
        { label: 'STATE', wipe: true },
        { label: 'EPHEMERAL', wipe: true },
      ],
    });
    expect((await cli(ws, ['-n', 'n1', 'reset', '--graceful', 'false'])).code).toBe(0);
    expect(lastCall('/machine.MachineService/Reset').request).toMatchObject({ graceful: false, reboot: false });
    expect(await cli(ws, ['reset', '--graceful=maybe'])).toMatchObject({ code: 2, err: expect.stringContaining('"maybe" is not a boolean') });
  });
});
