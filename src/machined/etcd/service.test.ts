// The etcd service's pre state as far as it goes without etcd: with the node's interfaces and
// cluster.etcd's subnets, `bootstrap` makes the command line (addresses, compaction, extraArgs)
// and the certificate covers every advertised address.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCA, type CertAndKey } from '../../pki/ca.ts';
import { silentLogger } from '../../lib/log.ts';
import { EtcdService } from './service.ts';
import type { EtcdSettings } from './config.ts';

const v4 = (address: string, cidr: string): os.NetworkInterfaceInfo => ({ address, cidr, netmask: '', family: 'IPv4', mac: '', internal: false });
const v6 = (address: string, cidr: string): os.NetworkInterfaceInfo => ({ address, cidr, netmask: '', family: 'IPv6', mac: '', internal: false, scopeid: 0 });
const ifaces = {
  lo: [{ ...v4('127.0.0.1', '127.0.0.1/8'), internal: true }],
  eth0: [v4('10.0.2.15', '10.0.2.15/24'), v6('fe80::1', 'fe80::1/64')],
  eth1: [v4('10.5.0.5', '10.5.0.5/24'), v6('fd00:5::5', 'fd00:5::5/64')],
};

describe('etcd service: the command line from the configuration', () => {
  let ca: CertAndKey;
  let dir: string;
  beforeAll(async () => {
    ca = await newCA({ commonName: 'etcd', validityDays: 1 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-etcd-svc-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Runs the pre state to `bootstrap`; the arguments as a map, and what the service reported. */
  async function bootstrapArgs(settings: Omit<EtcdSettings, 'ca'>, interfaces = ifaces): Promise<{ args: Record<string, string>; reports: string[]; service: EtcdService }> {
    const sub = path.join(dir, crypto.randomUUID());
    const service = new EtcdService({
      log: silentLogger,
      isControlPlane: () => true,
      settings: () => ({ ca, ...settings }),
      controlPlaneHost: () => undefined,
      dataDir: path.join(sub, 'data'),
      pkiDir: path.join(sub, 'pki'),
      hostname: () => 'cp1',
      interfaces: () => interfaces,
    });
    const reports: string[] = [];
    const ac = new AbortController();
    const prepared = service.spec({}).prepare!(ac.signal, (m) => reports.push(m));
    for (let i = 0; i < 200 && !service.waiting; i++) await new Promise((r) => setTimeout(r, 10));
    expect(service.waiting).toBe(true);
    await service.bootstrap({ recover: false, skipHashCheck: false });
    const res = (await prepared) as { args: string[] };
    const args = Object.fromEntries(res.args.map((a) => /^--([^=]+)=(.*)$/.exec(a)!.slice(1, 3) as [string, string]));
    return { args, reports, service };
  }

  it('defaults: advertises the first routable address, listens everywhere, compacts every 5 minutes', async () => {
    const { args, service } = await bootstrapArgs({ extraArgs: {}, advertisedSubnets: [], listenSubnets: [] });
    expect(args).toMatchObject({
      name: 'cp1',
      'advertise-client-urls': 'https://10.0.2.15:2379',
      'initial-advertise-peer-urls': 'https://10.0.2.15:2380',
      'initial-cluster': 'cp1=https://10.0.2.15:2380',
      'initial-cluster-state': 'new',
      'listen-peer-urls': 'https://0.0.0.0:2380',
      'listen-client-urls': 'https://0.0.0.0:2379',
      'listen-metrics-urls': 'http://127.0.0.1:2381',
      'auto-compaction-mode': 'periodic',
      'auto-compaction-retention': '5m',
    });
    expect(service.address).toBe('10.0.2.15');
  });

  it('advertisedSubnets: advertises and listens on what they select (clients on 127.0.0.1 too); the certificate names each', async () => {
    const { args, service } = await bootstrapArgs({ extraArgs: { 'auto-compaction-retention': '1h' }, advertisedSubnets: ['10.5.0.0/24', 'fd00:5::/64'], listenSubnets: [] });
    expect(args).toMatchObject({
      'advertise-client-urls': 'https://10.5.0.5:2379,https://[fd00:5::5]:2379',
      'initial-advertise-peer-urls': 'https://10.5.0.5:2380,https://[fd00:5::5]:2380',
      'initial-cluster': 'cp1=https://10.5.0.5:2380,cp1=https://[fd00:5::5]:2380',
      'listen-peer-urls': 'https://10.5.0.5:2380,https://[fd00:5::5]:2380',
      'listen-client-urls': 'https://127.0.0.1:2379,https://10.5.0.5:2379,https://[fd00:5::5]:2379',
      'auto-compaction-retention': '1h',
    });
    expect(service.address).toBe('10.5.0.5');
    const cert = new crypto.X509Certificate(service.tls()!.cert);
    expect(cert.subjectAltName).toContain('IP Address:10.5.0.5');
    expect(cert.subjectAltName).toMatch(/IP Address:FD00:5:0:0:0:0:0:5/i);
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
  });

  it('listenSubnets apart: listens on those, advertises the default', async () => {
    const { args } = await bootstrapArgs({ extraArgs: {}, advertisedSubnets: [], listenSubnets: ['10.5.0.0/16'] });
    expect(args).toMatchObject({
      'advertise-client-urls': 'https://10.0.2.15:2379',
      'listen-peer-urls': 'https://10.5.0.5:2380',
      'listen-client-urls': 'https://127.0.0.1:2379,https://10.5.0.5:2379',
    });
  });

  it('subnets that select nothing: waits, saying which subnets, and stops when told', async () => {
    const service = new EtcdService({
      log: silentLogger,
      isControlPlane: () => true,
      settings: () => ({ ca, extraArgs: {}, advertisedSubnets: ['10.5.0.0/24', '!10.5.0.5'], listenSubnets: [] }),
      controlPlaneHost: () => undefined,
      dataDir: path.join(dir, 'none', 'data'),
      pkiDir: path.join(dir, 'none', 'pki'),
      interfaces: () => ifaces,
    });
    const reports: string[] = [];
    const ac = new AbortController();
    const prepared = service.spec({}).prepare!(ac.signal, (m) => reports.push(m));
    await new Promise((r) => setTimeout(r, 50));
    expect(reports).toEqual(['Waiting for an address to advertise and listen on (within cluster.etcd subnets 10.5.0.0/24, !10.5.0.5)']);
    expect(service.waiting).toBe(false);
    ac.abort();
    await expect(prepared).rejects.toThrow(/stopped/);
  });
});
