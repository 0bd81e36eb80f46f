// The read API's handlers in-process on real files: DiskUsage's sizes, order and filters,
// Copy's .tar.gz (read back with tar-stream and compared with the files), CPUFreqStats on a
// sysfs tree, Netstat on a real socket of this process, Containers and Stats (more in containers.test.ts).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { extract } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containersHandlers } from './containers.ts';
import { copyHandlers } from './copy.ts';
import { cpuFreqHandlers, readCpuFreq } from './cpufreq.ts';
import { diskUsageHandlers, duPath } from './diskusage.ts';
import { netstat, parseProcNet, procNetAddress } from './netstat.ts';
import { callStream, callUnary, collect } from './testing.ts';

let dir: string;
const warnings: string[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-readapi-'));
  fs.mkdirSync(path.join(dir, 'a/b'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'a/one'), Buffer.alloc(1000, 1));
  fs.writeFileSync(path.join(dir, 'a/b/two'), Buffer.alloc(3000, 2));
  fs.writeFileSync(path.join(dir, 'top'), 'hello\n');
  fs.writeFileSync(path.join(dir, 'big'), Buffer.alloc(300 * 1024, 7));
  fs.symlinkSync('a/one', path.join(dir, 'link'));
  fs.chmodSync(path.join(dir, 'top'), 0o640);
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('DiskUsage', () => {
  const du = (req: object) => collect(diskUsageHandlers().DiskUsage, req);
  const dsize = (p: string) => fs.lstatSync(p).size;

  it('sums a tree deepest first, directories only by default, the whole tree when depth is 0', async () => {
    const out = await du({ paths: [dir] });
    expect(out.map((i) => i.relative_name)).toEqual(['a/b', 'a', '.']);
    const b = dsize(path.join(dir, 'a/b')) + 3000;
    const a = dsize(path.join(dir, 'a')) + 1000 + b;
    const root = dsize(dir) + a + 6 + 300 * 1024 + dsize(path.join(dir, 'link'));
    expect(out.map((i) => Number(i.size))).toEqual([b, a, root]);
    expect(out[2].name).toBe(dir);
  });

  it('with all: files too; depth limits what is shown, not what is summed; threshold filters', async () => {
    const all = await du({ paths: [dir], all: true });
    expect(all.map((i) => i.relative_name)).toEqual(['a/b/two', 'a/b', 'a/one', 'a', 'big', 'link', 'top', '.']);
    const depth1 = await du({ paths: [dir], recursion_depth: 1 }); // talosctl usage's default (--depth 0 + 1)
    expect(depth1.map((i) => i.relative_name)).toEqual(['.']);
    expect(Number(depth1[0].size)).toBe(Number(all.at(-1).size));
    const big = await du({ paths: [dir], all: true, threshold: 100 * 1024 });
    expect(big.map((i) => i.relative_name)).toEqual(['big', '.']);
    const small = await du({ paths: [dir], all: true, threshold: -10 });
    expect(small.map((i) => i.relative_name)).toEqual(['link', 'top']);
  });

  it('reports a missing path as an entry with its error, and goes on with the next', async () => {
    const out = await du({ paths: [path.join(dir, 'nope'), path.join(dir, 'a/b')] });
    expect(out[0]).toMatchObject({ name: path.join(dir, 'nope'), error: expect.stringMatching(/no such file/) });
    expect(out.slice(1).map((i) => i.relative_name)).toEqual(['.']);
    expect(duPath('var/log/')).toBe('/var/log');
    expect(duPath('')).toBe('/');
  });
});

/** The entries of a .tar.gz: name → {type, mode, body}. */
async function untar(gz: Buffer) {
  const out = new Map<string, { type: string; mode: number; body: Buffer; linkname?: string }>();
  const ex = extract();
  const done = (async () => {
    for await (const entry of ex) {
      const chunks: Buffer[] = [];
      for await (const c of entry) chunks.push(c as Buffer);
      out.set(entry.header.name, { type: entry.header.type, mode: entry.header.mode, body: Buffer.concat(chunks), linkname: entry.header.linkname });
    }
  })();
  ex.end(zlib.gunzipSync(gz));
  await done;
  return out;
}

describe('Copy', () => {
  const copy = (root: string) => collect<{ bytes: Buffer }>(copyHandlers({ warn: (m) => warnings.push(m) }).Copy, { root_path: root });

  it('archives a tree as .tar.gz: files byte for byte, modes, symlinks; sockets and FIFOs skipped', async () => {
    const sock = path.join(dir, 'sock');
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(sock, () => r()));
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    try {
      const out = await copy(dir);
      expect(out.length).toBeGreaterThan(0);
      const entries = await untar(Buffer.concat(out.map((m) => m.bytes)));
      expect([...entries.keys()].sort()).toEqual(['./', 'a/', 'a/b/', 'a/b/two', 'a/one', 'big', 'link', 'top'].sort());
      for (const f of ['a/b/two', 'a/one', 'big', 'top']) expect(entries.get(f)!.body.equals(fs.readFileSync(path.join(dir, f))), f).toBe(true);
      expect(entries.get('top')!.mode).toBe(0o640);
      expect(entries.get('link')).toMatchObject({ type: 'symlink', linkname: 'a/one' });
      expect(entries.get('a/')!.type).toBe('directory');
    } finally {
      server.close();
      fs.rmSync(path.join(dir, 'fifo'));
    }
  });

  it('archives a single file under its name, and refuses a relative or missing root', async () => {
    const entries = await untar(Buffer.concat((await copy(path.join(dir, 'top'))).map((m) => m.bytes)));
    expect([...entries.keys()]).toEqual(['top']);
    await expect(copy('a/one')).rejects.toMatchObject({ code: 3, message: expect.stringMatching(/absolute/) });
    await expect(copy(path.join(dir, 'missing'))).rejects.toMatchObject({ code: 5 });
  });

  it('stops when the client goes away', async () => {
    const s = callStream(copyHandlers({ warn: () => {} }).Copy, { root_path: dir });
    await s.waitFor(1);
    s.cancel();
    await s.done;
    expect(s.error).toBeUndefined();
  });
});

describe('CPUFreqStats', () => {
  it('reads each CPU\'s cpufreq in CPU order; a CPU without frequencies is empty; none without cpufreq', async () => {
    const sys = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-cpufreq-'));
    try {
      const put = (cpu: string, files: Record<string, string>) => {
        fs.mkdirSync(path.join(sys, cpu, 'cpufreq'), { recursive: true });
        for (const [f, v] of Object.entries(files)) fs.writeFileSync(path.join(sys, cpu, 'cpufreq', f), `${v}\n`);
      };
      put('cpu10', { cpuinfo_cur_freq: '1200000', cpuinfo_min_freq: '800000', cpuinfo_max_freq: '3600000', scaling_governor: 'powersave' });
      put('cpu2', { cpuinfo_min_freq: '800000' });
      fs.mkdirSync(path.join(sys, 'cpu3')); // no cpufreq
      fs.mkdirSync(path.join(sys, 'cpufreq'));
      expect(readCpuFreq(sys)).toEqual([{}, { current_frequency: 1200000, minimum_frequency: 800000, maximum_frequency: 3600000, governor: 'powersave' }]);
      const r = await callUnary(cpuFreqHandlers({ cpuDir: path.join(sys, 'none') }).CPUFreqStats, {});
      expect(r).toEqual({ messages: [{ cpu_freq_stats: [] }] });
    } finally {
      fs.rmSync(sys, { recursive: true, force: true });
    }
  });
});

describe('Netstat', () => {
  it('decodes /proc/net addresses and rows', () => {
    expect(procNetAddress('0100007F')).toBe('127.0.0.1');
    expect(procNetAddress('00000000000000000000000001000000')).toBe('::1');
    expect(procNetAddress('00000000000000000000000000000000')).toBe('::');
    expect(procNetAddress('0000000000000000FFFF00000100007F')).toBe('127.0.0.1');
    expect(procNetAddress('B80D0120000000000000000001000000')).toBe('2001:db8::1');
    const text =
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n' +
      '   0: 0100007F:0CEA 00000000:0000 0A 00000000:00000002 00:00000000 00000000     0        0 21567 1 ffff888004a1c000 100 0 0 10 0\n' +
      '   1: 0F02000A:C350 0202000A:E0F2 01 00000010:00000000 02:000000F0 00000003  1000        0 9999 2 ffff888004a1c800 20 4 30 10 -1\n';
    const rows = parseProcNet(text, 'tcp');
    expect(rows[0]).toMatchObject({ localip: '127.0.0.1', localport: 3306, remoteip: '0.0.0.0', remoteport: 0, state: 'LISTEN', rxqueue: 2, inode: 21567 });
    expect(rows[1]).toMatchObject({ localip: '10.0.2.15', localport: 50000, remoteip: '10.0.2.2', remoteport: 57586, state: 'ESTABLISHED', txqueue: 16, tr: 'KEEPALIVE', timerwhen: 240, retrnsmt: 3, uid: 1000, ref: 2 });
  });

  it('lists this process\'s listening socket with its pid, and filters by state and protocol', async () => {
    const server = net.createServer();
    const port = await new Promise<number>((r) => server.listen(0, '127.0.0.1', () => r((server.address() as net.AddressInfo).port)));
    try {
      const listening = netstat({ filter: 'LISTENING', feature: { pid: true }, l4proto: { tcp: true }, netns: { hostnetwork: true } });
      const mine = listening.find((r) => r.localport === port && r.localip === '127.0.0.1');
      expect(mine).toMatchObject({ l4proto: 'tcp', state: 'LISTEN', process: { pid: process.pid } });
      const connected = netstat({ filter: 'CONNECTED', l4proto: { tcp: true }, netns: { hostnetwork: true } });
      expect(connected.find((r) => r.localport === port)).toBeUndefined();
      expect(netstat({ filter: 'ALL', l4proto: { udp: true }, netns: { hostnetwork: true } }).every((r) => r.l4proto === 'udp')).toBe(true);
      expect(() => netstat({ netns: { netns: ['cni-1234'] } })).toThrow(/not found/);
    } finally {
      server.close();
    }
  });
});

describe('Containers and Stats', () => {
  it('answer UNAVAILABLE until the node has a container runtime', async () => {
    const h = containersHandlers();
    await expect(callUnary(h.Containers, { namespace: 'k8s.io', driver: 'CRI' })).rejects.toEqual({ code: 14, message: 'containerd is not running yet' });
    await expect(callUnary(h.Stats, { namespace: 'system' })).rejects.toEqual({ code: 14, message: 'containerd is not running yet' });
  });
});
