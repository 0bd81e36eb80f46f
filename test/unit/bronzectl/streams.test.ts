// bronzectl's streaming commands against a real mTLS server: logs, dmesg, events, list, read;
// per-line node prefixes, errors carried in stream metadata, clean end on SIGINT (abort).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as grpc from '@grpc/grpc-js';
import { protoRoot } from '../../../src/contract/protos.ts';
import { cli, makePki, md, startApi, workspace, type FakeApi, type Pki, type Workspace } from './testing.ts';

let pki: Pki;
let api: FakeApi;
let ws: Workspace;

function targets(call: grpc.ServerWritableStream<unknown, unknown>): string[] {
  return call.metadata.get('nodes').flatMap((v) => String(v).split(',')).map((v) => v.trim()).filter(Boolean);
}

function anyOf(type: string, value: object) {
  const t = protoRoot().lookupType(type);
  return { type_url: `talos/runtime/${type}`, value: Buffer.from(t.encode(t.fromObject(value)).finish()) };
}

const waitCancelled = (call: grpc.ServerWritableStream<unknown, unknown>) => new Promise<void>((resolve) => call.on('cancelled', () => resolve()));

beforeAll(async () => {
  pki = await makePki();
  api = await startApi(pki, {
    '/machine.MachineService/Logs': {
      stream: async (req, call) => {
        for (const n of targets(call)) {
          if (n === 'bad') {
            call.write({ metadata: md(n, 'log "x" not found') });
            continue;
          }
          // Lines split across chunks must come out whole, each with its node.
          call.write({ metadata: md(n), bytes: Buffer.from(`${req.id} line 1\n${req.id} li`) });
          call.write({ metadata: md(n), bytes: Buffer.from('ne 2\n') });
        }
        if (req.follow) {
          call.write({ metadata: md('n1'), bytes: Buffer.from('following\n') });
          await waitCancelled(call);
        }
      },
    },
    '/machine.MachineService/Dmesg': {
      stream: (_req, call) => {
        // As machined (and Talos) sends it: one record per message, without a newline.
        call.write({ metadata: null, bytes: Buffer.from('kern:    info: [1.0]: Linux version 6.12') });
        call.write({ metadata: null, bytes: Buffer.from('kern:  notice: [1.1]: random: crng init done') });
        call.write({ metadata: null, bytes: Buffer.from('kern:    info: [1.2]: two lines\nin one message\n') });
      },
    },
    '/machine.MachineService/Events': {
      stream: async (_req, call) => {
        call.write({ metadata: md('n1'), id: 'e1', actor_id: '', data: anyOf('machine.SequenceEvent', { sequence: 'boot', action: 'START' }) });
        call.write({ metadata: md('n1'), id: 'e2', actor_id: 'a1', data: anyOf('machine.ServiceStateEvent', { service: 'apid', action: 'RUNNING', message: 'Health check successful' }) });
        call.write({ metadata: md('n1'), id: 'e3', actor_id: '', data: anyOf('machine.PhaseEvent', { phase: 'mount', action: 'STOP' }) });
        await waitCancelled(call);
      },
    },
    '/machine.MachineService/List': {
      stream: (req, call) => {
        call.write({ metadata: md('n1'), name: req.root, relative_name: '.', size: '4096', mode: (2 ** 31 + 0o755) >>> 0, modified: '1700000000', is_dir: true, uid: 0, gid: 0 });
        call.write({ metadata: md('n1'), name: `${req.root}/hosts`, relative_name: 'hosts', size: '42', mode: 0o644, modified: '1700000000', uid: 0, gid: 0 });
        call.write({ metadata: md('n1'), name: `${req.root}/resolv.conf`, relative_name: 'resolv.conf', size: '0', mode: (2 ** 27 + 0o777) >>> 0, modified: '1700000000', link: '/system/resolv.conf' });
        call.write({ metadata: md('n1'), name: `${req.root}/secret`, relative_name: 'secret', error: 'permission denied' });
      },
    },
    '/machine.MachineService/Read': {
      stream: (_req, call) => {
        call.write({ metadata: null, bytes: Buffer.from([0, 1, 2, 255]) });
        call.write({ metadata: null, bytes: Buffer.from('tail') });
      },
    },
  });
  ws = await workspace(pki, [api.endpoint]);
});

afterAll(async () => {
  await api.close();
  await ws.cleanup();
});

const lastCall = (p: string) => api.calls.filter((c) => c.path === p).at(-1)!;

describe('logs', () => {
  it('prefixes every whole line with its node; a node error is printed and fails the run', async () => {
    const r = await cli(ws, ['-n', 'n1,bad,n2', 'logs', 'apid', '--tail', '20']);
    expect(r.out).toBe('n1: apid line 1\nn1: apid line 2\nn2: apid line 1\nn2: apid line 2\n');
    expect(r.err).toBe('bad: log "x" not found\n');
    expect(r.code).toBe(1);
    expect(lastCall('/machine.MachineService/Logs')).toMatchObject({ nodes: ['n1', 'bad', 'n2'], request: { id: 'apid', follow: false, tail_lines: 20, namespace: 'system' } });
  });

  it('-f streams until SIGINT, then ends cleanly with exit code 0', async () => {
    const r = await cli(ws, ['-n', 'n1', 'logs', '-f', 'machined'], { interruptWhen: (out) => out.includes('following\n') });
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toBe('n1: machined line 1\nn1: machined line 2\nn1: following\n');
    expect(lastCall('/machine.MachineService/Logs').request).toMatchObject({ follow: true, tail_lines: -1 });
  });

  it('a missing service id is a usage error (exit 2)', async () => {
    const r = await cli(ws, ['logs']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/missing required argument 'id'/);
  });
});

describe('dmesg', () => {
  it('one line per kernel message, named after the endpoint without nodes (issue 17: all on one line)', async () => {
    const r = await cli(ws, ['dmesg']);
    expect(r.code).toBe(0);
    const e = api.endpoint;
    expect(r.out).toBe(
      `${e}: kern:    info: [1.0]: Linux version 6.12\n${e}: kern:  notice: [1.1]: random: crng init done\n${e}: kern:    info: [1.2]: two lines\n${e}: in one message\n`,
    );
  });
});

describe('events', () => {
  it('decodes each payload into talosctl columns and stops on SIGINT', async () => {
    const r = await cli(ws, ['-n', 'n1', 'events', '--tail', '3', '--duration', '2m'], { interruptWhen: (out) => out.split('\n').length > 4 });
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NODE +ID +EVENT +ACTOR +SOURCE +MESSAGE$/);
    expect(lines[1]).toMatch(/^n1 +e1 +talos\/runtime\/machine\.SequenceEvent +boot +START$/);
    expect(lines[2]).toMatch(/^n1 +e2 +talos\/runtime\/machine\.ServiceStateEvent +a1 +apid +RUNNING: Health check successful$/);
    expect(lines[3]).toMatch(/^n1 +e3 +talos\/runtime\/machine\.PhaseEvent +mount +STOP$/);
    expect(lastCall('/machine.MachineService/Events').request).toMatchObject({ tail_events: 3, tail_seconds: 120, tail_id: '' });
  });

  it('a bad --duration is named', async () => {
    const r = await cli(ws, ['events', '--duration', 'soon']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^--duration: invalid duration "soon"/);
  });
});

describe('list', () => {
  it('short and long listings; unreadable entries reported per node', async () => {
    const short = await cli(ws, ['-n', 'n1', 'ls', '/etc']);
    expect(short.out).toBe('NODE   NAME\nn1     .\nn1     hosts\nn1     resolv.conf\n');
    expect(short.err).toBe('n1: error reading file /etc/secret: permission denied\n');
    expect(short.code).toBe(1);
    expect(lastCall('/machine.MachineService/List').request).toMatchObject({ root: '/etc', recurse: false, recursion_depth: 1 });

    const long = await cli(ws, ['-n', 'n1', 'list', '-l', '-r', '/etc']);
    const d = new Date(1700000000 * 1000);
    const date = `${['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getMonth()]} ${d.getDate()} ${d.getFullYear()}`;
    const lines = long.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NODE +MODE +UID +GID +SIZE\(B\) +LASTMOD +NAME$/);
    expect(lines[1]).toMatch(new RegExp(`^n1 +drwxr-xr-x +0 +0 +4096 +${date} +\\.$`));
    expect(lines[2]).toMatch(new RegExp(`^n1 +-rw-r--r-- +0 +0 +42 +${date} +hosts$`));
    expect(lines[3]).toMatch(/^n1 +Lrwxrwxrwx .* resolv\.conf -> \/system\/resolv\.conf$/);
    expect(lastCall('/machine.MachineService/List').request).toMatchObject({ recurse: true, recursion_depth: 0 });

    await cli(ws, ['-n', 'n1', 'list', '-d', '3', '-t', 'f,d', '/']);
    expect(lastCall('/machine.MachineService/List').request).toMatchObject({ recurse: true, recursion_depth: 3, types: ['REGULAR', 'DIRECTORY'] });
  });
});

describe('read', () => {
  it('writes the raw bytes, targeting the node with `nodes`', async () => {
    const r = await cli(ws, ['-n', 'n1', 'read', '/etc/hosts']);
    expect(r.code).toBe(0);
    expect(r.raw).toEqual(Buffer.concat([Buffer.from([0, 1, 2, 255]), Buffer.from('tail')]));
    expect(lastCall('/machine.MachineService/Read')).toMatchObject({ request: { path: '/etc/hosts' }, nodes: ['n1'] });
  });

  it('refuses several nodes', async () => {
    const r = await cli(ws, ['-n', 'a,b', 'read', '/etc/hosts']);
    expect(r).toMatchObject({ code: 1, err: '"read" command is not supported with multiple nodes\n' });
  });
});
