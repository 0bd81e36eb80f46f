// The read API through the real bronzectl, a real apid (mTLS, RBAC) and a real machined on
// this host: `cp` of a directory matches `read` of each of its files, `usage`, `netstat`,
// `containers`/`stats` (no container runtime), and `pcap` on loopback with a tcpdump -dd
// filter; cp is admin-only and pcap operator-or-admin, as in Talos.
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { LINKTYPE_ETHERNET, PcapReader } from '../../src/lib/pcap.ts';
import { udpDstPort } from '../lib/bpf-programs.ts';
import { bronzectl } from '../lib/bronzectl.ts';
import { HostNode } from '../lib/nodes.ts';
import { filesUnder } from '../lib/files-under.ts';
import { freePort } from '../lib/ports.ts';

const isRoot = process.getuid?.() === 0;


describe('the read API through bronzectl, apid and machined', () => {
  let node: HostNode;
  let dir: string;
  let src: string;
  const config: Record<'admin' | 'operator' | 'reader', string> = { admin: '', operator: '', reader: '' };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-readapi-it-'));
    src = path.join(dir, 'src');
    fs.mkdirSync(path.join(src, 'log/apid'), { recursive: true });
    fs.writeFileSync(path.join(src, 'log/machined.log'), 'machined line 1\nmachined line 2\n');
    fs.writeFileSync(path.join(src, 'log/apid/apid.log'), Buffer.alloc(200 * 1024, 'a'));
    fs.writeFileSync(path.join(src, 'top.txt'), 'top\n');
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'ra', endpoint: 'https://127.0.0.50:6443', secrets });
    node = new HostNode({ name: 'ra', address: '127.0.0.50', apiPort: await freePort(), config: cfg.controlplane, services: ['apid'] }).start();
    await node.waitFor(/serving the API on/, 60_000);
    for (const role of ['admin', 'operator', 'reader'] as const) {
      config[role] = path.join(dir, `${role}.bronzeconfig`);
      await save(config[role], await newClientConfig({ contextName: 'ra', endpoints: [node.endpoint], ca: secrets.certs.os, roles: [`os:${role}`], ttlMs: 3600_000 }));
    }
  }, 90_000);

  afterAll(async () => {
    await node?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('cp of a directory gives exactly what read gives for each file', async () => {
    const out = path.join(dir, 'out');
    const r = await bronzectl(['cp', src, out], { config: config.admin });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const files = filesUnder(out);
    expect(files).toEqual(['log/apid/apid.log', 'log/machined.log', 'top.txt']);
    for (const f of files) {
      const read = await bronzectl(['read', path.join(src, f)], { config: config.admin });
      expect(read.code, read.stderr).toBe(0);
      expect(fs.readFileSync(path.join(out, f), 'utf8')).toBe(read.stdout);
    }
    // `-`: the .tar.gz itself on stdout
    const raw = await bronzectl(['cp', path.join(src, 'top.txt'), '-'], { config: config.admin });
    expect(raw.code).toBe(0);
    // cp reads files: admin only, as read
    const denied = await bronzectl(['cp', src, path.join(dir, 'no')], { config: config.operator });
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/PermissionDenied|permission denied|requires one of os:admin/i);
  });

  it('usage sums the tree; netstat shows apid listening; containers and stats say there is no runtime', async () => {
    const du = await bronzectl(['usage', src, '-a', '-d', '3'], { config: config.reader });
    expect(du.code, du.stderr).toBe(0);
    expect(du.stdout).toMatch(/^NODE\s+SIZE\s+NAME/);
    expect(du.stdout).toMatch(new RegExp(`\\s${200 * 1024}\\s+log/apid/apid.log\\n`));
    const ns = await bronzectl(['netstat', '-l', '-t', '-p'], { config: config.reader });
    expect(ns.code, ns.stderr).toBe(0);
    expect(ns.stdout).toMatch(/Proto\s+Recv-Q\s+Send-Q\s+Local Address\s+Foreign Address\s+State\s+PID\/Program name/);
    expect(ns.stdout).toMatch(new RegExp(`tcp\\s+0\\s+0\\s+127\\.0\\.0\\.50:${node.o.apiPort}\\s+0\\.0\\.0\\.0:\\*\\s+LISTEN\\s+\\d+/`));
    // A host run of machined has no containerd: the container RPCs say so (UNAVAILABLE).
    for (const cmd of ['containers', 'stats']) {
      const c = await bronzectl([cmd, '-k'], { config: config.reader });
      expect(c.code, c.stderr).toBe(1);
      expect(c.stderr).toMatch(/containerd is not running yet/);
    }
  });

  it.runIf(isRoot)('pcap captures on the node\'s loopback through a tcpdump -dd filter; a reader may not capture', async () => {
    const port = 45000 + Math.floor(Math.random() * 5000);
    const file = path.join(dir, 'lo.pcap');
    const sock = dgram.createSocket('udp4');
    const timer = setInterval(() => {
      sock.send(Buffer.from('bronze-pcap-wanted'), port, '127.0.0.1');
      sock.send(Buffer.from('bronze-pcap-other'), port + 1, '127.0.0.1');
    }, 100);
    try {
      const r = await bronzectl(['pcap', '-i', 'lo', '--bpf-filter', udpDstPort(port), '--duration', '4s', '-o', file], { config: config.operator, timeoutMs: 15_000 });
      expect(r.code, r.stderr).toBe(0);
    } finally {
      clearInterval(timer);
      sock.close();
    }
    const reader = new PcapReader();
    const packets = reader.push(fs.readFileSync(file));
    expect(reader.header?.linktype).toBe(LINKTYPE_ETHERNET);
    expect(packets.length).toBeGreaterThan(5);
    expect(packets.every((p) => p.data.includes('bronze-pcap-wanted'))).toBe(true);
    const denied = await bronzectl(['pcap', '-i', 'lo', '--duration', '1s'], { config: config.reader });
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/requires one of os:admin, os:operator/);
  }, 60_000);
});
