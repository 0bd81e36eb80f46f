// End-to-end: the read API on the real image under QEMU. The node has a second NIC (eth1,
// 10.9.0.2/24) on a QEMU socket network whose other end is this test: it answers the node's
// ARP as 10.9.0.1 and pings it, while `bronzectl pcap -i eth1` with a tcpdump -dd `icmp`
// filter captures the echo requests and the node's replies. `cp /etc` is compared with `read`
// of each file; /etc/hostname holds the node's hostname; usage, netstat and containers answer.
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { QemuVM } from '../../image-builder/qemu.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { PcapReader, type PcapPacket } from '../../src/lib/pcap.ts';
import { ICMP } from '../lib/bpf-programs.ts';
import { bronzectl, bronzectlUntilOk } from '../lib/bronzectl.ts';
import { consoleFile } from '../lib/console-log.ts';
import { serveFiles, type FileServer } from '../lib/http-files.ts';
import { freePort } from '../lib/ports.ts';

const BOOT = 300_000;
const NODE_MAC = Buffer.from([0x52, 0x54, 0x00, 0x00, 0x09, 0x02]);
const HOST_MAC = Buffer.from([0x02, 0x00, 0x00, 0x00, 0x09, 0x01]);
const NODE_IP = Buffer.from([10, 9, 0, 2]);
const HOST_IP = Buffer.from([10, 9, 0, 1]);

function checksum(b: Buffer): number {
  let sum = 0;
  for (let i = 0; i + 1 < b.length; i += 2) sum += b.readUInt16BE(i);
  if (b.length % 2) sum += b[b.length - 1]! << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return ~sum & 0xffff;
}

/** An Ethernet frame: ICMP echo request from the host side to the node. */
function echoRequest(seq: number): Buffer {
  const icmp = Buffer.concat([Buffer.from([8, 0, 0, 0, 0x42, 0x42, seq >> 8, seq & 0xff]), Buffer.from(`bronze-ping-${seq}`)]);
  icmp.writeUInt16BE(checksum(icmp), 2);
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(20 + icmp.length, 2);
  ip.writeUInt16BE(seq, 4);
  ip[8] = 64;
  ip[9] = 1;
  HOST_IP.copy(ip, 12);
  NODE_IP.copy(ip, 16);
  ip.writeUInt16BE(checksum(ip), 10);
  return Buffer.concat([NODE_MAC, HOST_MAC, Buffer.from([0x08, 0x00]), ip, icmp]);
}

/** The host side of the node's eth1: a QEMU socket network (one UDP datagram per frame). */
class HostSide {
  readonly sock = dgram.createSocket('udp4');
  readonly replies: number[] = [];

  constructor(readonly qemuPort: number) {
    this.sock.on('message', (f) => {
      const type = f.readUInt16BE(12);
      if (type === 0x0806 && f.readUInt16BE(20) === 1 && f.subarray(38, 42).equals(HOST_IP)) {
        // ARP who-has 10.9.0.1: answer as the host side.
        const reply = Buffer.concat([f.subarray(6, 12), HOST_MAC, Buffer.from([0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 2]), HOST_MAC, HOST_IP, f.subarray(22, 28), f.subarray(28, 32)]);
        this.sock.send(reply, this.qemuPort, '127.0.0.1');
      } else if (type === 0x0800 && f[23] === 1 && f[34] === 0 && f.subarray(26, 30).equals(NODE_IP)) {
        this.replies.push(f.readUInt16BE(40)); // echo reply: its sequence number
      }
    });
  }

  listen(port: number): Promise<void> {
    return new Promise((r) => this.sock.bind(port, '127.0.0.1', () => r()));
  }

  ping(seq: number): void {
    this.sock.send(echoRequest(seq), this.qemuPort, '127.0.0.1');
  }

  close(): void {
    this.sock.close();
  }
}

function filesUnder(root: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...filesUnder(root, r));
    else if (e.isFile()) out.push(r);
  }
  return out.sort();
}

describe('the read API on a node', () => {
  let vm: QemuVM;
  let files: FileServer;
  let dir: string;
  let config: string;
  let host: HostSide;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-readapi-e2e-'));
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'readapi', endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets });
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
    await save(config, await newClientConfig({ contextName: 'readapi', endpoints: [`127.0.0.1:${port}`], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
    vm = new QemuVM(
      {
        apiPort: port,
        append: `ip=dhcp bronze.config=http://10.0.2.2:${files.port}/controlplane.yaml`,
        extraArgs: ['-netdev', `socket,id=hostside,udp=127.0.0.1:${hostPort},localaddr=127.0.0.1:${qemuPort}`, '-device', `virtio-net-pci,netdev=hostside,mac=52:54:00:00:09:02`],
      },
      consoleFile('readapi'),
    ).start();
    await vm.waitFor(/machined\[1\]: all 5 services Running/, BOOT);
    await bronzectlUntilOk(['version'], { config, timeoutMs: 120_000 });
  }, BOOT + 180_000);

  afterAll(async () => {
    vm?.kill();
    host?.close();
    await files?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

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
    const c = await bronzectl(['containers'], { config });
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toMatch(/no container runtime/);
  }, 120_000);
});
