import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { cli, grpcError, makePki, md, startApi, workspace, type FakeApi, type Workspace } from '../../../test/unit/bronzectl/testing.ts';
import { PRESETS, buildTree, divideBy, humanizeIBytes, parseValue, presetFiles, processName, renderTree, usecToDuration, valueString } from './cgroups.ts';

const MiB = 1024 * 1024;

/** A node's /sys/fs/cgroup, as the List and Read calls give it. */
const FILES: Record<string, Record<string, string>> = {
  '.': { 'cpu.stat': 'usage_usec 9000000\nuser_usec 6000000\nsystem_usec 3000000\n', 'cgroup.procs': '2\n3\n' },
  init: { 'memory.current': `${50 * MiB}\n`, 'memory.min': `${96 * MiB}\n`, 'memory.low': `${192 * MiB}\n`, 'memory.max': 'max\n', 'memory.peak': `${60 * MiB}\n`, 'cpu.stat': 'user_usec 1500000\nsystem_usec 250\n', 'pids.current': '9\n', 'cgroup.procs': '1\n' },
  system: { 'memory.current': `${120 * MiB}\n`, 'memory.min': `${96 * MiB}\n`, 'cpu.stat': 'user_usec 3000000\nsystem_usec 1500000\n', 'pids.current': '40\n', 'cgroup.procs': '' },
  'system/apid': { 'memory.current': `${40 * MiB}\n`, 'memory.min': `${16 * MiB}\n`, 'memory.max': `${256 * MiB}\n`, 'cpu.stat': 'user_usec 1000000\nsystem_usec 500000\n', 'pids.current': '12\n', 'cgroup.procs': '101\n' },
  'system/runtime': { 'memory.current': `${30 * MiB}\n`, 'memory.min': `${48 * MiB}\n`, 'cpu.stat': 'user_usec 90061000000\nsystem_usec 0\n', 'pids.current': '20\n', 'cgroup.procs': '200\n201\n' },
  taloscontainers: { 'memory.current': '0\n', 'pids.max': '16384\n', 'cgroup.procs': '' },
  'taloscontainers/web': { 'memory.current': '4096\n', 'memory.max': `${64 * MiB}\n`, 'cgroup.procs': '300\n' },
};
const tree = () => buildTree(Object.keys(FILES), (g) => new Map(Object.entries(FILES[g] ?? {})));

describe('cgroup values, as talosctl prints them', () => {
  it('parses and prints plain, fractional, max and missing values', () => {
    expect(valueString(parseValue('42\n'))).toBe('42');
    expect(valueString(parseValue('0.25'))).toBe('0.25');
    expect(valueString(parseValue('max'))).toBe('max');
    expect(valueString(parseValue(undefined))).toBe('unset');
  });

  it('humanizes bytes as Go humanize.IBytes', () => {
    expect(humanizeIBytes(parseValue('0'))).toBe('0 B');
    expect(humanizeIBytes(parseValue('4096'))).toBe('4.0 KiB');
    expect(humanizeIBytes(parseValue(String(96 * MiB)))).toBe('96 MiB');
    expect(humanizeIBytes(parseValue(String(1.5 * MiB)))).toBe('1.5 MiB');
    expect(humanizeIBytes(parseValue('max'))).toBe('max');
  });

  it('divides into a percentage with two decimals', () => {
    expect(valueString(divideBy(parseValue('50'), parseValue('200')))).toBe('25.00');
    expect(valueString(divideBy(parseValue('1'), parseValue('max')))).toBe('0.00');
    expect(valueString(divideBy(parseValue('1'), parseValue('0')))).toBe('max');
    expect(valueString(divideBy(parseValue(undefined), parseValue('3')))).toBe('unset');
  });

  it("prints microseconds as Go's time.Duration", () => {
    expect(usecToDuration(parseValue('0'))).toBe('0s');
    expect(usecToDuration(parseValue('250'))).toBe('250µs');
    expect(usecToDuration(parseValue('1500'))).toBe('1.5ms');
    expect(usecToDuration(parseValue('1500000'))).toBe('1.5s');
    expect(usecToDuration(parseValue('90061000000'))).toBe('25h1m1s');
    expect(usecToDuration(parseValue(undefined))).toBe('unset');
  });
});

describe('bronzectl cgroups', () => {
  it('draws the tree as talosctl does, children sorted, with the preset columns', () => {
    const out = renderTree(tree(), PRESETS.memory!);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+MemCurrent\s+MemPeak\s+MemLow\s+Peak\/Low\s+MemHigh\s+MemMin\s+Current\/Min\s+MemMax$/);
    expect(lines.map((l) => l.match(/^[│ ]*(?:[├└]──)?\S*/)![0])).toEqual(['NAME', '.', '├──init', '├──system', '│   ├──apid', '│   └──runtime', '└──taloscontainers', '    └──web']);
    const init = lines[2]!;
    expect(init).toContain('50 MiB');
    expect(init).toContain('96 MiB');
    expect(init).toContain('192 MiB');
    expect(init).toContain(' 52.08%'); // 50 of 96 MiB
    expect(lines[1]).toContain('unset'); // the root has no memory.current
  });

  it('shares CPU time against the parent, and names processes', () => {
    const root = tree();
    const names = new Map([['101', 'apid'], ['200', 'containerd'], ['201', 'containerd-shim-runc-v2']]);
    const walk = (n: ReturnType<typeof tree>) => {
      n.procNames = (n.files.get('cgroup.procs') ?? '').split('\n').filter(Boolean).map((p) => names.get(p) ?? p);
      n.children.forEach(walk);
    };
    walk(root);
    const cpu = renderTree(root, PRESETS.cpu!).split('\n');
    const apid = cpu.find((l) => l.includes('apid'))!;
    expect(apid).toContain('1s');
    expect(apid).toContain('33.33%'); // 1 s of system's 3 s
    expect(cpu[1]).toMatch(/^\.\s.*\s-\s/); // the root has no parent to share with
    const usage = renderTree(root, PRESETS.usage!).split('\n');
    expect(usage.find((l) => l.includes('runtime'))).toContain('[containerd containerd-shim-runc-v2]');
    expect(usage.find((l) => l.includes('runtime'))).toContain('25h1m1s');
  });

  it("offers talosctl's presets, each naming the files it reads", () => {
    expect(Object.keys(PRESETS)).toEqual(expect.arrayContaining(['cpu', 'cpuset', 'io', 'memory', 'process', 'psi', 'swap', 'usage']));
    expect(presetFiles(PRESETS.process!)).toEqual(['pids.current', 'pids.peak', 'pids.max', 'cgroup.procs', 'cgroup.threads']);
    expect(presetFiles(PRESETS.usage!)).toEqual(expect.arrayContaining(['memory.current', 'cpu.stat', 'pids.current', 'cgroup.procs']));
  });

  it('renders io.stat per device and pressure', () => {
    const root = buildTree(['.', 'system'], (g) =>
      new Map(g === 'system' ? [['io.stat', '254:0 rbytes=1048576 wbytes=2048 rios=10 wios=2 dbytes=0 dios=0\n'], ['io.pressure', 'some avg10=1.50 avg60=0.25 avg300=0.00 total=2500\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n']] : []),
    );
    const line = renderTree(root, PRESETS.io!).split('\n').find((l) => l.includes('system'))!;
    expect(line).toContain('254:0: 1.0 MiB/2.0 KiB');
    expect(line).toContain('254:0: 10/2');
    expect(line).toContain('1.50');
    expect(line).toContain('2.5ms');
  });

  it('names a process by its argv[0]: every Bronze daemon is the same executable', () => {
    expect(processName({ executable: '/sbin/init', command: 'apid', args: 'apid' })).toBe('apid');
    expect(processName({ executable: '/usr/bin/containerd-shim-runc-v2', command: 'containerd-shim', args: '/usr/bin/containerd-shim-runc-v2 -namespace x' })).toBe('containerd-shim-runc-v2');
    expect(processName({ executable: '', command: 'kthreadd', args: '' })).toBe('kthreadd');
  });
});

describe('bronzectl cgroups against the API (List, Read, Processes)', () => {
  let api: FakeApi;
  let ws: Workspace;
  beforeAll(async () => {
    const pki = await makePki();
    api = await startApi(pki, {
      '/machine.MachineService/List': {
        stream: (req, call) => {
          for (const g of Object.keys(FILES)) call.write({ metadata: md('n1'), name: g === '.' ? req.root : `${req.root}/${g}`, relative_name: g, is_dir: true });
        },
      },
      '/machine.MachineService/Read': {
        stream: (req, call) => {
          const rel = String(req.path).replace(/^\/sys\/fs\/cgroup\/?/, '');
          const i = rel.lastIndexOf('/');
          const [g, f] = i < 0 ? ['.', rel] : [rel.slice(0, i), rel.slice(i + 1)];
          const text = FILES[g]?.[f];
          if (text === undefined) throw grpcError(grpc.status.NOT_FOUND, `stat ${req.path}: no such file or directory`);
          call.write({ metadata: null, bytes: Buffer.from(text) });
        },
      },
      '/machine.MachineService/Processes': {
        unary: () => ({ messages: [{ metadata: md('n1'), processes: [{ pid: 101, command: 'init', executable: '/sbin/init', args: 'apid' }, { pid: 200, command: 'containerd', executable: '/usr/bin/containerd', args: '/usr/bin/containerd --config /system/etc/containerd/config.toml' }] }] }),
      },
    });
    ws = await workspace(pki, [api.endpoint]);
  });
  afterAll(async () => {
    await api.close();
    await ws.cleanup();
  });

  it('prints the tree with usage, reading each group\'s files, processes named', async () => {
    const r = await cli(ws, ['-n', 'n1', 'cgroups']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+MemCurrent\s+MemMin\s+MemLow\s+MemMax\s+CpuUser\s+CpuSystem\s+PidsCurrent\s+Processes$/);
    expect(lines.find((l) => l.includes('apid'))).toMatch(/│   ├──apid\s+40 MiB\s+16 MiB\s+unset\s+256 MiB\s+1s\s+500ms\s+12\s+\[apid\]$/);
    expect(lines.find((l) => l.includes('runtime'))).toContain('[containerd 201]');
    const reads = api.calls.filter((c) => c.path === '/machine.MachineService/Read').map((c) => (c.request as { path: string }).path);
    expect(reads).toContain('/sys/fs/cgroup/system/apid/memory.current');
    expect(reads).toContain('/sys/fs/cgroup/cpu.stat');
  });

  it('takes a preset, refuses an unknown one and several nodes', async () => {
    const r = await cli(ws, ['-n', 'n1', 'cg', '--preset', 'process']);
    expect(r.out.split('\n')[0]).toMatch(/^NAME\s+PidsCurrent\s+PidsPeak\s+PidsMax\s+Procs\s+Threads\s+Processes$/);
    const bad = await cli(ws, ['-n', 'n1', 'cgroups', '--preset', 'nope']);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('invalid preset name: nope');
    const many = await cli(ws, ['-n', 'a,b', 'cgroups']);
    expect(many.code).not.toBe(0);
    expect(many.err).toContain('not supported with multiple nodes');
  });
});
