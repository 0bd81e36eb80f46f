// End-to-end: a Talos user's configuration as it is. A configuration shaped like `talosctl gen
// config` for Talos v1.14 (the multi-document form: KubeClusterConfig, Kube* documents,
// DiscoveryServiceConfig, VolumeConfig, FilesystemTrimConfig, SecurityProfileConfig, ...), with
// an ECDSA P-256 OS CA and the settings a user patches in, goes to a node booted from disk.raw in
// maintenance mode with `apply-config --insecure`. The node reports the Kubernetes parts as
// ignored, leaves maintenance mode on certificates signed by the ECDSA CA, and comes up with its
// hostname, network (DHCP, resolvers, /etc/hosts), time (synced from a real NTP server),
// sysctls, files, a bond over two more NICs, EPHEMERAL's mount options and a periodic fstrim
// applied.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { applyPatches, loadPatches } from '../../src/config/patch.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { bronzectl, bronzectlUntilOk, until } from '../lib/bronzectl.ts';
import { startHostChrony, type HostChrony } from '../lib/chrony-host.ts';
import { consoleFile } from '../lib/console-log.ts';
import { freePort } from '../lib/ports.ts';
import { talosCA, talosKeyPem } from '../lib/talos-pki.ts';
import { talosShapedConfig } from '../unit/config/talos-configs.ts';

const BOOT = 300_000;
const DISK = path.join('_out', 'amd64', 'disk.raw');

describe('a Talos v1.14 configuration on a Bronze node', () => {
  let vm: QemuVM;
  let dir: string;
  let config: string;
  let target: string;
  let cpFile: string;
  let chrony: HostChrony;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-talos-e2e-'));
    chrony = await startHostChrony(await freePort());
    const [osCA, k8s, aggregator, etcd] = await Promise.all([talosCA('ec-p256', 'talos'), talosCA('ec-p256', 'kubernetes'), talosCA('ec-p256', 'front-proxy'), talosCA('ec-p256', 'etcd')]);
    const serviceAccountKey = talosKeyPem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
    const generated = talosShapedConfig('v1.14', 'controlplane', { os: osCA, k8s, aggregator, etcd, serviceAccountKey }).yaml;
    // What a user patches into a generated config for this machine.
    const patches = [
      'machine:\n  certSANs: [127.0.0.1]\n  install:\n    disk: /dev/vda\n  sysctls:\n    vm.swappiness: "11"\n  files:\n    - content: "from a Talos config\\n"\n      permissions: 0o644\n      path: /var/etc/talos-e2e.txt\n      op: create',
      'apiVersion: v1alpha1\nkind: HostnameConfig\nauto: off\nhostname: talos-shaped-1',
      'apiVersion: v1alpha1\nkind: ResolverConfig\nnameservers:\n  - address: 10.0.2.3',
      `apiVersion: v1alpha1\nkind: TimeSyncConfig\nntp:\n  servers: [10.0.2.2:${chrony.port}]`,
      'apiVersion: v1alpha1\nkind: DHCPv4Config\nname: eth0\nrouteMetric: 1500',
      'apiVersion: v1alpha1\nkind: StaticHostConfig\nname: 10.0.2.50\nhostnames: [registry.lab, registry]',
      'apiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\nmount:\n  disableAccessTime: true',
      'apiVersion: v1alpha1\nkind: FilesystemTrimConfig\ninterval: 20s',
      'apiVersion: v1alpha1\nkind: BondConfig\nname: bond0\nlinks: [eth1, eth2]\nbondMode: active-backup\nmiimon: 100\naddresses:\n  - address: 192.168.50.2/24',
    ];
    cpFile = path.join(dir, 'controlplane.yaml');
    fs.writeFileSync(cpFile, applyPatches(generated, loadPatches(patches, () => '')));
    const port = await freePort();
    target = `127.0.0.1:${port}`;
    config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'talos', endpoints: [target], ca: osCA, roles: ['os:admin'], ttlMs: 3600_000 }));
    // Two more NICs (eth1, eth2) for the bond, on isolated user networks of subnets of their
    // own: in maintenance mode networkd asks DHCP on every link, and QEMU's default 10.0.2.0/24
    // on all three gave three equal routes to the host, so the API's replies left by whichever
    // NIC's lease came first (eth1's in one CI run: the node never answered).
    const nics = [['n1', '10.0.3.0/24'], ['n2', '10.0.4.0/24']].flatMap(([id, net]) => ['-netdev', `user,id=${id},net=${net},restrict=on`, '-device', `virtio-net-pci,netdev=${id}`]);
    vm = new QemuVM({ apiPort: port, boot: { kind: 'disk', path: DISK, snapshot: true }, extraArgs: nics }, consoleFile('talos-config')).start();
    await vm.waitFor(/machined\[1\]: mounted EPHEMERAL \(\/dev\/vda6\) at \/var/, BOOT);
    await vm.waitFor(/machined\[1\]: maintenance mode: no machine configuration/, BOOT);
  }, BOOT + 60_000);

  afterAll(async () => {
    vm?.kill();
    await chrony?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('takes the configuration, saying which parts it ignores, and leaves maintenance mode on ECDSA-signed certificates', async () => {
    // In maintenance mode the node answers the reader API without credentials (as Talos).
    await bronzectlUntilOk(['get', 'resourcedefinitions', '--insecure', '-n', target], { timeoutMs: 120_000 });
    const before = vm.lines.length;
    const r = await bronzectl(['apply-config', '--insecure', '-n', target, '-f', cpFile]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warning: KubeletConfig \(line \d+\): ignored: Bronze runs no Kubernetes/);
    expect(r.stderr).toMatch(/warning: machine\.features\.kubePrism \(line \d+\): ignored: Bronze runs no Kubernetes/);
    expect(r.stderr).toMatch(/warning: DiscoveryServiceConfig\(default\) \(line \d+\): accepted and kept for later/);
    await vm.waitFor(/left maintenance mode/, 60_000, before);
    const v = await bronzectlUntilOk(['version'], { config, timeoutMs: 60_000 });
    expect(v.stdout).toMatch(/Server:/);
    const mc = await bronzectl(['get', 'machineconfig', '-o', 'yaml'], { config });
    expect(mc.stdout).toMatch(/KubeAPIServerConfig \(line \d+\): ignored: Bronze runs no Kubernetes/);
  });

  it('comes up with its hostname, sysctls and files', async () => {
    expect((await until('hostname', () => bronzectl(['get', 'hostname'], { config }), (x) => /talos-shaped-1/.test(x.stdout), 60_000)).stdout).toMatch(/talos-shaped-1/);
    expect((await until('sysctl', () => bronzectl(['read', '/proc/sys/vm/swappiness'], { config }), (x) => x.stdout.trim() === '11', 60_000)).stdout.trim()).toBe('11');
    expect((await until('file', () => bronzectl(['read', '/var/etc/talos-e2e.txt'], { config }), (x) => x.code === 0, 60_000)).stdout).toBe('from a Talos config\n');
  });

  it('comes up with its network: the DHCP lease with the configured route metric, the resolvers, the static hosts', async () => {
    const routes = await until('route metric', () => bronzectl(['get', 'routes', '-o', 'yaml'], { config }), (x) => /priority: 1500/.test(x.stdout), 90_000);
    expect(routes.stdout).toMatch(/gateway: 10\.0\.2\.2/);
    expect((await bronzectl(['get', 'addresses'], { config })).stdout).toMatch(/10\.0\.2\.15\/24/);
    expect((await bronzectl(['get', 'resolvers'], { config })).stdout).toMatch(/10\.0\.2\.3/);
    const hosts = await until('hosts', () => bronzectl(['read', '/system/etc/hosts'], { config }), (x) => /registry\.lab/.test(x.stdout), 60_000);
    expect(hosts.stdout).toMatch(/^10\.0\.2\.50\s+registry\.lab registry$/m);
  });

  it('creates the bond of its BondConfig over two NICs, with its address', async () => {
    const bonding = await until('bond', () => bronzectl(['read', '/proc/net/bonding/bond0'], { config }), (x) => /Slave Interface: eth2/.test(x.stdout), 90_000);
    expect(bonding.stdout).toMatch(/Bonding Mode: fault-tolerance \(active-backup\)/);
    expect(bonding.stdout).toMatch(/MII Polling Interval \(ms\): 100/);
    expect(bonding.stdout).toMatch(/Slave Interface: eth1/);
    expect((await bronzectl(['get', 'addresses'], { config })).stdout).toMatch(/bond0.*192\.168\.50\.2\/24|192\.168\.50\.2\/24.*bond0/);
  });

  it('syncs its clock from the NTP server of its TimeSyncConfig', async () => {
    // Talos's TimeStatus says whether the clock is synced, not from where: `time` names the server.
    await until('time sync', () => bronzectl(['get', 'timestatus', '-o', 'yaml'], { config }), (x) => /synced: true/.test(x.stdout), 120_000);
    const t = await bronzectl(['time'], { config });
    expect(t.stdout).toMatch(new RegExp(`^NODE +NTP-SERVER +NODE-TIME +NTP-SERVER-TIME\\n\\S+ +10\\.0\\.2\\.2:${chrony.port} +\\d{4}-`));
  });

  it('mounts EPHEMERAL nosuid, nodev, noatime, and trims it and STATE periodically', async () => {
    const mounts = await until('noatime', () => bronzectl(['read', '/proc/mounts'], { config }), (x) => /\/dev\/vda6 \/var xfs \S*noatime/.test(x.stdout), 60_000);
    const opts = /\/dev\/vda6 \/var xfs (\S+)/.exec(mounts.stdout)![1]!.split(',');
    expect(opts).toEqual(expect.arrayContaining(['nosuid', 'nodev', 'noatime']));
    await vm.waitFor(/machined\[1\]: .*fstrim EPHEMERAL \(\/var\): \d+ bytes discarded/, 60_000);
    await vm.waitFor(/machined\[1\]: .*fstrim STATE \(\/system\/state\): \d+ bytes discarded/, 60_000);
  });

  it('runs every service (nothing of Kubernetes is started)', async () => {
    const s = await until('services', () => bronzectl(['services'], { config }), (x) => (x.stdout.match(/Running/g) ?? []).length >= 6, 60_000);
    // A control plane runs etcd (waiting for bootstrap, as on Talos) and containerd (every node
    // does, for ContainerConfig); nothing of Kubernetes.
    expect(s.stdout).not.toMatch(/kubelet|kube-apiserver/);
    expect(s.stdout).toMatch(/\betcd\b/);
    expect(s.stdout).toMatch(/\bcontainerd\b/);
    expect(vm.oom).toBeUndefined();
  });
});
