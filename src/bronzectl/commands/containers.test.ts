// bronzectl's container commands (containers, stats, restart, logs of a container) against a
// real mTLS server standing in for apid: talosctl's columns, the namespace and driver each flag
// sends, per-node errors.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, grpcError, makePki, md, startApi, workspace, type FakeApi, type Workspace } from '../../../test/unit/bronzectl/testing.ts';

let api: FakeApi;
let ws: Workspace;

const last = (p: string) => api.calls.filter((c) => c.path === p).at(-1)!;

beforeAll(async () => {
  const pki = await makePki();
  api = await startApi(pki, {
    '/machine.MachineService/Containers': {
      unary: (req) => ({
        messages: [
          {
            metadata: md('node1'),
            // As machined sends them: sorted by id (src/machined/api/containers.ts); the CLI keeps that order.
            containers: [
              { namespace: req.namespace, id: 'batch', pod_id: 'batch', image: 'alpine:3', pid: 0, status: 'STOPPED' },
              { namespace: req.namespace, id: 'web', pod_id: 'web', image: '10.0.2.2:5000/busybox:1', pid: 4242, status: 'RUNNING' },
            ],
          },
          { metadata: md('node2', 'containerd is not running yet') },
        ],
      }),
    },
    '/machine.MachineService/Stats': {
      unary: (req) => ({ messages: [{ metadata: md('node1'), stats: [{ namespace: req.namespace, id: 'web', pod_id: 'web', memory_usage: '5242880', cpu_usage: '123456789' }] }] }),
    },
    '/machine.MachineService/Restart': {
      unary: (req) => {
        if (req.id === 'nope') throw grpcError(grpc.status.NOT_FOUND, 'container "nope" not found in namespace "taloscontainers"');
        return { messages: [{ metadata: md('node1') }] };
      },
    },
    '/machine.MachineService/Logs': {
      stream: (req, call) => {
        call.write({ metadata: md('node1'), bytes: Buffer.from(`${req.namespace}/${req.id} line 1\n${req.namespace}/${req.id} li`) });
        call.write({ metadata: md('node1'), bytes: Buffer.from('ne 2\n') });
      },
    },
  });
  ws = await workspace(pki, [api.endpoint]);
});

afterAll(async () => {
  await api?.close();
  await ws?.cleanup();
});

describe('containers', () => {
  it("taloscontainers by default, talosctl's columns in the node's order (by id); a failing node is reported", async () => {
    const r = await cli(ws, ['containers']);
    expect(r.code).toBe(1);
    expect(last('/machine.MachineService/Containers').request).toMatchObject({ namespace: 'taloscontainers', driver: 'CONTAINERD' });
    expect(r.out).toBe(
      [
        'NODE    NAMESPACE         ID      IMAGE                     PID    STATUS',
        'node1   taloscontainers   batch   alpine:3                  0      STOPPED',
        'node1   taloscontainers   web     10.0.2.2:5000/busybox:1   4242   RUNNING',
        '',
      ].join('\n'),
    );
    expect(r.err).toBe('node2: containerd is not running yet\n');
  });

  it('-k sends k8s.io with the CRI driver (talosctl); --namespace any other', async () => {
    await cli(ws, ['c', '-k']);
    expect(last('/machine.MachineService/Containers').request).toMatchObject({ namespace: 'k8s.io', driver: 'CRI' });
    await cli(ws, ['containers', '--namespace', 'system']);
    expect(last('/machine.MachineService/Containers').request).toMatchObject({ namespace: 'system', driver: 'CONTAINERD' });
  });
});

describe('stats', () => {
  it("memory in MB (talosctl's 1e-6) and cpu", async () => {
    const r = await cli(ws, ['stats']);
    expect(r.code).toBe(0);
    expect(last('/machine.MachineService/Stats').request).toMatchObject({ namespace: 'taloscontainers', driver: 'CONTAINERD' });
    expect(r.out).toBe(['NODE    NAMESPACE         ID    MEMORY(MB)   CPU', 'node1   taloscontainers   web   5.24         123456789', ''].join('\n'));
  });
});

describe('restart', () => {
  it('restarts a container in taloscontainers; an unknown one fails naming it', async () => {
    const ok = await cli(ws, ['restart', 'web']);
    expect(ok).toMatchObject({ code: 0, out: '' });
    expect(last('/machine.MachineService/Restart').request).toMatchObject({ namespace: 'taloscontainers', driver: 'CONTAINERD', id: 'web' });
    const bad = await cli(ws, ['restart', 'nope']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('container "nope" not found in namespace "taloscontainers"');
    expect((await cli(ws, ['restart'])).code).toBe(2);
  });
});

describe('logs', () => {
  it("a service's log by default (namespace system), a container's with --namespace or -k", async () => {
    const svc = await cli(ws, ['logs', 'apid']);
    expect(last('/machine.MachineService/Logs').request).toMatchObject({ namespace: 'system', id: 'apid', tail_lines: -1 });
    expect(svc.out).toBe('node1: system/apid line 1\nnode1: system/apid line 2\n');
    const ctr = await cli(ws, ['logs', 'web', '--namespace', 'taloscontainers', '--tail', '5']);
    expect(last('/machine.MachineService/Logs').request).toMatchObject({ namespace: 'taloscontainers', driver: 'CONTAINERD', id: 'web', tail_lines: 5 });
    expect(ctr.out).toBe('node1: taloscontainers/web line 1\nnode1: taloscontainers/web line 2\n');
    await cli(ws, ['logs', 'web', '-k']);
    expect(last('/machine.MachineService/Logs').request).toMatchObject({ namespace: 'k8s.io', driver: 'CRI' });
  });
});
