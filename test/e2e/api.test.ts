// End-to-end: the real image under QEMU, configured at boot from a URL (the guest fetches it
// from a server on the host's loopback through QEMU's user network), driven from the host with
// bronzectl over mTLS through the forwarded API port: version, services, logs machined,
// memory, get services, every resource type of the registry (by the names completion offers;
// table, YAML, JSON and -w; proto_spec read strictly with the copies of Talos's messages); the
// read API: the node's second NIC (eth1, 10.9.0.2/24) is on a QEMU socket network whose other
// end is this test (test/lib/hostside.ts), which pings it while `bronzectl pcap -i eth1` with a
// tcpdump -dd `icmp` filter captures the requests and the replies; `cp /etc` is compared with
// `read` of each file; usage, netstat and containers answer. Then reboot (the node comes back)
// and shutdown (the VM powers off). One VM for all: each boot costs a minute under TCG.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { connect, node } from '../../src/client/index.ts';
import { load, newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { AmbiguousResourceTypeError, DefinitionRegistry, RESOURCE_DEFINITIONS } from '../../src/contract/resources/registry.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { PcapReader, type PcapPacket } from '../../src/lib/pcap.ts';
import { ICMP } from '../lib/bpf-programs.ts';
import { bronzectl, bronzectlUntilOk } from '../lib/bronzectl.ts';
import { consoleFile } from '../lib/console-log.ts';
import { serveFiles, type FileServer } from '../lib/http-files.ts';
import { filesUnder } from '../lib/files-under.ts';
import { HostSide } from '../lib/hostside.ts';
import { freePort } from '../lib/ports.ts';
import { strictDecode } from '../lib/proto-strict.ts';

/** The names bash completion offers after `bronzectl get `. */
function offeredTypeNames(script: string, dir: string): string[] {
  const file = path.join(dir, 'bronzectl.bash');
  fs.writeFileSync(file, script);
  const r = spawnSync('bash', ['--norc', '-c', `source ${file}; COMP_WORDS=(bronzectl get ''); COMP_CWORD=2; _bronzectl; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean);
}

/** `bronzectl get <name> -w` until it has printed `rows` resources (or waitMs passed), then SIGINT. */
function watchThenInterrupt(args: string[], rows: number, waitMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [path.resolve('bin/bronzectl.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let sent = false;
    const interrupt = () => {
      if (sent) return;
      sent = true;
      p.kill('SIGINT');
    };
    const timer = setTimeout(interrupt, waitMs);
    const kill = setTimeout(() => p.kill('SIGKILL'), waitMs + 30_000);
    p.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.split('\n').filter(Boolean).length > rows) setTimeout(interrupt, 500); // the header, then the rows
    });
    p.stderr.on('data', (d) => (stderr += d));
    p.on('exit', (code) => {
      clearTimeout(timer);
      clearTimeout(kill);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Types a booted node without a disk or sysctls in its configuration may have none of; and the
 * containers' types, without a ContainerConfig here (workloads.test.ts lists them, and reads them
 * strictly on Talos's wire, on a node that runs containers).
 */
const MAY_BE_EMPTY = new Set([
  'MountStatuses.runtime.talos.dev',
  'KernelParamStatuses.runtime.talos.dev',
  'ContainerSpecs.containers.talos.dev',
  'ContainerImageStatuses.containers.talos.dev',
  'ContainerInstanceSpecs.containers.talos.dev',
  'ContainerStatuses.containers.bronze.dev',
]);

const BOOT = 300_000;

describe('a node driven by bronzectl', () => {
  let vm: QemuVM;
  let files: FileServer;
  let dir: string;
  let config: string;
  let host: HostSide;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-api-e2e-'));
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'e2e', endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets });
    // A second NIC, eth1 (10.9.0.2/24), on a socket network whose other end is this test (the read API's pcap).
    const doc = YAML.parseDocument(cfg.controlplane);
    doc.setIn(['machine', 'network', 'interfaces'], [
      { interface: 'eth0', dhcp: true },
      { interface: 'eth1', addresses: ['10.9.0.2/24'] },
    ]);
    files = await serveFiles({ '/controlplane.yaml': doc.toString() });
    const port = await freePort();
    const hostPort = await freePort();
    const qemuPort = await freePort();
    host = new HostSide(qemuPort);
    await host.listen(hostPort);
    config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'e2e', endpoints: [`127.0.0.1:${port}`], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
    vm = new QemuVM(
      {
        apiPort: port,
        append: `ip=dhcp bronze.config=http://10.0.2.2:${files.port}/controlplane.yaml`,
        extraArgs: ['-netdev', `socket,id=hostside,udp=127.0.0.1:${hostPort},localaddr=127.0.0.1:${qemuPort}`, '-device', `virtio-net-pci,netdev=hostside,mac=52:54:00:00:09:02`],
      },
      consoleFile('api'),
    ).start();
    await vm.waitFor(/machined\[1\]: all 6 services Running/, BOOT);
  }, BOOT + 60_000);

  afterAll(async () => {
    vm?.kill();
    host?.close();
    await files?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('fetched its configuration from the URL', () => {
    expect(files.requests).toContain('/controlplane.yaml');
    expect(vm.lines.some((l) => /configuration from http:\/\/10\.0\.2\.2:\d+\/controlplane\.yaml: controlplane of cluster e2e/.test(l))).toBe(true);
  });

  it('answers version with the node\'s build', async () => {
    const r = await bronzectlUntilOk(['version'], { config, timeoutMs: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/Client:/);
    expect(r.stdout).toMatch(/Server:/);
    expect(r.stdout).toMatch(/Tag:\s+v\d+\.\d+\.\d+/);
  });

  it('lists the services, all running', async () => {
    const r = await bronzectl(['services'], { config });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^NODE\s+SERVICE\s+STATE\s+HEALTH/);
    for (const s of ['apid', 'trustd', 'networkd', 'timed', 'udevd']) expect(r.stdout).toMatch(new RegExp(`\\b${s}\\s+Running\\s+OK`));
  });

  it('shows machined\'s log', async () => {
    const r = await bronzectl(['logs', 'machined'], { config });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/starting as PID 1/);
    expect(r.stdout).toMatch(/service apid: Running/);
  });

  it('reports memory', async () => {
    const r = await bronzectl(['memory'], { config });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^NODE\s+TOTAL\s+USED\s+FREE/);
    expect(r.stdout.split('\n')[1]).toMatch(/\d+/);
  });

  it('gets the services resources', async () => {
    const r = await bronzectl(['get', 'services'], { config });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/apid\s+\d+\s+true\s+true/);
  });

  it('lists every type in the registry by a name completion offers: table, YAML and JSON', async () => {
    const registry = new DefinitionRegistry();
    const offered = offeredTypeNames((await bronzectl(['completion', 'bash'])).stdout, dir);
    for (const def of RESOURCE_DEFINITIONS) {
      const name = offered.find((n) => {
        try {
          return registry.resolve(n).type === def.type;
        } catch (e) {
          if (e instanceof AmbiguousResourceTypeError) return false;
          throw e;
        }
      });
      expect(name, `completion offers a name for ${def.type}`).toBeDefined();
      const table = await bronzectl(['get', name!], { config });
      expect(table.code, `get ${name}: ${table.stderr}`).toBe(0);
      expect(table.stderr).toBe('');
      const rows = table.stdout.split('\n').filter(Boolean);
      if (!MAY_BE_EMPTY.has(def.type)) {
        expect(rows.length, `${def.type} has resources`).toBeGreaterThan(1);
        expect(rows[0]).toMatch(/^NODE\s+NAMESPACE\s+TYPE\s+ID\s+VERSION/);
        expect(rows[1]).toContain(def.displayType);
      }
      // Through `node` routing too (-n: apid routes the call to itself, as the README's example).
      const y = await bronzectl(['-n', '127.0.0.1', 'get', name!, '-o', 'yaml'], { config });
      expect(y.code, y.stderr).toBe(0);
      const docs = YAML.parseAllDocuments(y.stdout).map((d) => d.toJS() as { metadata: { type: string; namespace: string }; spec: unknown } | null).filter(Boolean);
      expect(docs.length).toBe(rows.length === 0 ? 0 : rows.length - 1);
      for (const d of docs) expect(d!.metadata).toMatchObject({ type: def.type, namespace: def.defaultNamespace });
      const j = await bronzectl(['-n', '127.0.0.1', 'get', name!, '-o', 'json'], { config });
      expect(j.code, j.stderr).toBe(0);
      const objs = j.stdout.trim() === '' ? [] : j.stdout.split(/\n(?=\{)/).map((t) => JSON.parse(t) as { metadata: { type: string }; spec: unknown });
      expect(objs.map((o) => o.metadata.type)).toEqual(docs.map((d) => d!.metadata.type));
    }
  }, 600_000);

  it('serves every resource on Talos\'s wire: proto_spec reads strictly with the copies of Talos\'s messages', async () => {
    const cfg = await load(config);
    const ctx = cfg.contexts[cfg.context]!;
    const client = connect({ endpoints: ctx.endpoints, ca: ctx.ca, crt: ctx.crt, key: ctx.key });
    try {
      // Directly, and through `node` routing (apid routing the call, here to itself).
      for (const routed of [false, true]) {
        for (const def of RESOURCE_DEFINITIONS) {
          let n = 0;
          for await (const r of client.state.list(def.defaultNamespace, def.type, routed ? { metadata: node('127.0.0.1') } : {})) {
            n++;
            expect(r.metadata).toMatchObject({ type: def.type, namespace: def.defaultNamespace });
            const bytes = r.spec!.proto_spec;
            expect(() => strictDecode(def.proto!.message, bytes), `${def.type}/${r.metadata!.id}${routed ? ' (routed)' : ''}`).not.toThrow();
          }
          if (!MAY_BE_EMPTY.has(def.type)) expect(n, `${def.type}${routed ? ' (routed)' : ''}`).toBeGreaterThan(0);
        }
      }
    } finally {
      client.close();
    }
  }, 300_000);

  it('watches every type: the current resources, then a clean end on SIGINT', async () => {
    for (const def of RESOURCE_DEFINITIONS) {
      const table = await bronzectl(['get', def.type], { config });
      const want = Math.max(0, table.stdout.split('\n').filter(Boolean).length - 1);
      const w = await watchThenInterrupt(['--bronzeconfig', config, 'get', def.type, '-w'], want, want > 0 ? 60_000 : 5000);
      expect(w.code, `get ${def.type} -w: ${w.stderr}`).toBe(0);
      const rows = w.stdout.split('\n').filter(Boolean);
      if (want > 0) {
        expect(rows[0]).toMatch(/^NODE\s+\*\s+NAMESPACE\s+TYPE\s+ID\s+VERSION/);
        expect(rows.slice(1).length).toBeGreaterThanOrEqual(want);
        for (const r of rows.slice(1, want + 1)) expect(r).toMatch(/^\S+\s+\+\s+/);
      }
    }
  }, 900_000);

  it('pcap on eth1 captures a ping from the host side of the network, through an icmp filter', async () => {
    // The node answers pings on eth1 once its address is up.
    const deadline = Date.now() + 120_000;
    for (let seq = 1; host.replies.length === 0 && Date.now() < deadline; seq++) {
      host.ping(seq);
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(host.replies.length).toBeGreaterThan(0);

    const file = path.join(dir, 'eth1.pcap');
    let seq = 1000;
    const pinger = setInterval(() => host.ping(seq++), 300);
    let r;
    try {
      r = await bronzectl(['pcap', '-i', 'eth1', '--bpf-filter', ICMP, '--duration', '20s', '-o', file], { config, timeoutMs: 90_000 });
    } finally {
      clearInterval(pinger);
    }
    expect(r.code, r.stderr).toBe(0);
    const reader = new PcapReader();
    const packets: PcapPacket[] = reader.push(fs.readFileSync(file));
    expect(reader.header?.linktype).toBe(1);
    const icmp = packets.map((p) => ({ type: p.data[34], src: [...p.data.subarray(26, 30)].join('.'), dst: [...p.data.subarray(30, 34)].join('.'), seq: p.data.readUInt16BE(40) }));
    expect(packets.every((p) => p.data.readUInt16BE(12) === 0x0800 && p.data[23] === 1)).toBe(true); // only ICMP passed the filter
    const requests = icmp.filter((p) => p.type === 8 && p.src === '10.9.0.1' && p.dst === '10.9.0.2');
    const replies = icmp.filter((p) => p.type === 0 && p.src === '10.9.0.2' && p.dst === '10.9.0.1');
    expect(requests.length).toBeGreaterThan(3);
    expect(replies.length).toBeGreaterThan(3);
    for (const rep of replies) expect(requests.map((q) => q.seq)).toContain(rep.seq);
  }, 240_000);

  it('cp /etc gives what read gives for each file', async () => {
    const out = path.join(dir, 'etc');
    const r = await bronzectl(['cp', '/etc', out], { config, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const got = filesUnder(out);
    expect(got).toContain('os-release');
    expect(got).toContain('ssl/certs/ca-certificates.crt');
    for (const f of got) {
      const read = await bronzectl(['read', `/etc/${f}`], { config, timeoutMs: 60_000 });
      expect(read.code, read.stderr).toBe(0);
      expect(fs.readFileSync(path.join(out, f), 'utf8'), f).toBe(read.stdout); // /etc holds text only
    }
    // /etc/hostname is a link into /system/etc, archived as one, and holds the hostname.
    expect(fs.readlinkSync(path.join(out, 'hostname'))).toBe('/system/etc/hostname');
    const hostname = await bronzectl(['read', '/etc/hostname'], { config });
    const kernel = await bronzectl(['read', '/proc/sys/kernel/hostname'], { config });
    expect(hostname.stdout).toBe(kernel.stdout);
    expect(hostname.stdout).toMatch(/^[a-z0-9-]+\n$/);
  }, 300_000);

  it('usage, netstat and containers answer', async () => {
    const du = await bronzectl(['usage', '/etc'], { config });
    expect(du.code, du.stderr).toBe(0);
    expect(du.stdout).toMatch(/\d+\s+\.\n/);
    const ns = await bronzectl(['netstat', '-l', '-t'], { config });
    expect(ns.code, ns.stderr).toBe(0);
    expect(ns.stdout).toMatch(/:50000\s+(0\.0\.0\.0|::):\*\s+LISTEN/);
    // containerd runs on every node: no ContainerConfig here, so no container is listed.
    const c = await bronzectl(['containers'], { config });
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toMatch(/^NODE\s+NAMESPACE\s+ID/);
    expect(c.stdout.trim().split('\n')).toHaveLength(1);
  }, 120_000);

  it('reboots, and the node comes back', async () => {
    const before = vm.lines.length;
    const r = await bronzectl(['reboot'], { config });
    expect(r.code, r.stderr).toBe(0);
    await vm.waitFor(/machined\[1\]: rebooting/, 60_000, before);
    const up = await vm.waitFor(/machined\[1\]: all 6 services Running/, BOOT, before);
    expect(up).toBeGreaterThan(before);
    const v = await bronzectlUntilOk(['version'], { config, timeoutMs: 120_000 });
    expect(v.code, v.stderr).toBe(0);
  }, BOOT + 120_000);

  it('shuts down, and the VM powers off', async () => {
    const before = vm.lines.length;
    const r = await bronzectl(['shutdown'], { config });
    expect(r.code, r.stderr).toBe(0);
    await vm.waitFor(/machined\[1\]: powering off/, 60_000, before);
    expect(await vm.waitExit(60_000)).toBe(0);
  }, 180_000);
});
