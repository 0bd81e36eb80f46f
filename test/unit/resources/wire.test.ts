// Every resource type Bronze serves, on Talos's wire: resources made by the real producers
// (networkd's specs from a real kernel's rtnetlink dump, udevd over a fake /sys and disk images,
// machined's controllers and readers, the registry) go through machined's wire conversion; each
// proto_spec is read back strictly with the project's copies of Talos's messages (an unknown field
// or a wrong wire type fails), its values are checked, and yaml_spec is the spec's YAML form.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatePublisher } from '../../../src/daemon/publisher.ts';
import type { ResourceDefinition } from '../../../src/contract/resources/definition.ts';
import { machineConfigDocuments } from '../../../src/contract/resources/machine-config-text.ts';
import { MACHINE_CONFIG_TYPE, type MachineConfigSpec } from '../../../src/contract/resources/machine-config.ts';
import { NAMESPACES } from '../../../src/contract/resources/namespace.ts';
import { DefinitionRegistry, RESOURCE_DEFINITIONS } from '../../../src/contract/resources/registry.ts';
import { generateConfigs } from '../../../src/contract/genconfig.ts';
import { generateSecrets } from '../../../src/contract/secrets.ts';
import type { Logger } from '../../../src/lib/log.ts';
import { toWireResource } from '../../../src/machined/api/resources.ts';
import { parsedConfig } from '../../../src/machined/config/parsed.ts';
import { machineConfigSpec, parsedMachineConfigSpec } from '../../../src/machined/config/spec.ts';
import { serviceSpec } from '../../../src/machined/controllers/services.ts';
import { publishDefinitions, publishNamespaces } from '../../../src/machined/meta.ts';
import { mountStatuses } from '../../../src/machined/mount-status.ts';
import { readSecurityState } from '../../../src/machined/security-state.ts';
import { readRootfsStatus } from '../../../src/machined/rootfs-status.ts';
import { fakeRootfsProbe } from '../../lib/rootfs-probe.ts';
import { RTM, decodeAddress, decodeLink, decodeRoute, splitMessages, type Link } from '../../../src/networkd/netlink.ts';
import { addressId, addressStatusSpec, linkStatusSpec, nodeAddresses, publishedRoute, routeId, routeStatusSpec } from '../../../src/networkd/resources.ts';
import { MemoryState } from '../../../src/state/memory.ts';
import { ClusterRegistry, memberFromWire, memberToWire } from '../../../src/machined/cluster/registry.ts';
import { newResource, type Resource } from '../../../src/state/resource.ts';
import { populate } from '../../../src/disk/testing-sysfs.ts';
import { ManualUeventSource } from '../../../src/udevd/uevent-socket.ts';
import { buildGpt, ext4Superblock, fatImage } from '../../../src/disk/testing-images.ts';
import { Udevd } from '../../../src/udevd/udevd.ts';
import { strictDecode, type Decoded } from '../../lib/proto-strict.ts';
import { unusedKeys } from '../../../src/contract/resources/codec.ts';
import { messageType } from '../../../src/contract/protos.ts';
import { containerDocs } from '../../../src/config/accessors/containers.ts';
import { parseConfig } from '../../../src/config/validate.ts';

const registry = new DefinitionRegistry();
const quiet: Logger = { info() {}, warn() {}, error() {} };
const samples: Resource[] = [];
const put = (namespace: string, type: string, id: string, spec: unknown) => samples.push(newResource(namespace, type, id, spec));

/** Datagrams captured from a real kernel (test/fixtures/networkd). */
function dump<T>(name: string, type: number, decode: (m: ReturnType<typeof splitMessages>[number]) => T): T[] {
  return fs
    .readFileSync(`test/fixtures/networkd/${name}`, 'utf8')
    .trim()
    .split('\n')
    .flatMap((l) => splitMessages(Buffer.from(l, 'hex')))
    .filter((m) => m.type === type)
    .map(decode);
}

let tmp: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wire-'));

  // networkd: links, addresses, routes and node addresses of a real kernel, as networkd publishes them.
  const links = dump('rtm-getlink-dump.hex', RTM.NEWLINK, decodeLink);
  const byIndex = new Map<number, Link>(links.map((l) => [l.index, l]));
  for (const l of links) put('network', 'LinkStatuses.net.talos.dev', l.name, linkStatusSpec(l, l.name === 'eth0' ? { driver: 'virtio_net', duplex: 'Unknown', speedMbit: 1000 } : {}));
  put('network', 'LinkStatuses.net.talos.dev', 'eth0.7', linkStatusSpec({ ...links[1]!, name: 'eth0.7', kind: 'vlan', parent: 2, vlan: { id: 7, protocol: '802.1Q' }, alias: 'up', altNames: ['x'], master: 3 }));
  const addrs = dump('rtm-getaddr-dump.hex', RTM.NEWADDR, decodeAddress);
  for (const a of addrs) put('network', 'AddressStatuses.net.talos.dev', addressId(a, byIndex.get(a.index)?.name ?? ''), addressStatusSpec(a, byIndex.get(a.index)?.name ?? ''));
  for (const r of dump('rtm-getroute-dump.hex', RTM.NEWROUTE, decodeRoute).filter(publishedRoute)) put('network', 'RouteStatuses.net.talos.dev', routeId(r), routeStatusSpec(r, byIndex.get(r.oif ?? 0)?.name ?? ''));
  const current = nodeAddresses(addrs, byIndex);
  put('network', 'NodeAddresses.net.talos.dev', 'current', { addresses: current });
  put('network', 'ResolverStatuses.net.talos.dev', 'resolvers', { dnsServers: ['10.0.2.3', '2001:db8::53'], searchDomains: ['example.org'] });
  put('network', 'HostnameStatuses.net.talos.dev', 'hostname', { hostname: 'node-1', domainname: 'example.org' });
  put('network', 'TimeServerStatuses.net.talos.dev', 'timeservers', { timeServers: ['time.cloudflare.com', '10.0.2.2'] });

  // udevd: Disks, BlockDevices, DiscoveredVolumes and BlockSymlinks over a fake /sys.
  const sys = path.join(tmp, 'sys');
  const nodes = path.join(tmp, 'nodes');
  fs.mkdirSync(nodes);
  populate(sys);
  fs.writeFileSync(
    path.join(nodes, 'vda'),
    buildGpt({ sectors: 16384, diskGuid: '6d1f0a24-3b8e-4c5b-9a0e-2f7d3c1b5a49', partitions: [
      { type: 'c12a7328-f81f-11d2-ba4b-00a0c93ec93b', uuid: '11111111-2222-4333-8444-555555555555', name: 'EFI', first: 2048, last: 6143 },
      { type: '0fc63daf-8483-4772-8e79-3d69d8477de4', uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', name: 'STATE', first: 6144, last: 14335 },
    ] }),
  );
  fs.writeFileSync(path.join(nodes, 'vda1'), fatImage({ fat32: false, serial: 0xdeadbeef, bootLabel: 'EFI' }));
  fs.writeFileSync(path.join(nodes, 'vda2'), ext4Superblock({ uuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', label: 'STATE' }));
  for (const n of ['nvme0n1', 'nvme0n1p1', 'sda', 'sdb', 'sdc', 'mmcblk0']) fs.writeFileSync(path.join(nodes, n), '');
  const devices = new MemoryState();
  const udevd = await Udevd.start({ publisher: new StatePublisher(devices, 'udevd'), log: quiet, devRoot: path.join(tmp, 'dev'), nodeRoot: nodes, sysRoot: sys, source: new ManualUeventSource(), trigger: false });
  await udevd.settled();
  await udevd.stop();
  for (const t of ['Disks.block.talos.dev', 'BlockDevices.block.talos.dev', 'DiscoveredVolumes.block.talos.dev', 'BlockSymlinks.block.talos.dev']) samples.push(...(await devices.list('runtime', t)));

  // machined.
  for (const [id, state, healthy] of [['apid', 'Running', true], ['udevd', 'Preparing', undefined], ['etcd', 'Failed', false]] as const) {
    put('runtime', 'Services.v1alpha1.talos.dev', id, serviceSpec({ state, healthy }));
  }
  put('runtime', 'MachineStatuses.runtime.talos.dev', 'machine', { stage: 'maintenance', status: { ready: false, unmetConditions: [{ name: 'config', reason: 'no configuration' }] } });
  put('runtime', 'MachineStatuses.runtime.talos.dev', 'running', { stage: 'running', status: { ready: true, unmetConditions: [] } });
  const cfg = generateConfigs({ clusterName: 'wire', endpoint: 'https://10.0.2.15:6443', secrets: await generateSecrets() });
  put('config', MACHINE_CONFIG_TYPE, 'v1alpha1', machineConfigSpec(parsedConfig(cfg.controlplane)));
  put('config', 'ParsedMachineConfigs.config.bronze.dev', 'v1alpha1', parsedMachineConfigSpec(parsedConfig(cfg.controlplane)));
  put('runtime', 'KernelParamStatuses.runtime.talos.dev', 'net.ipv4.ip_forward', { current: '1', default: '0', unsupported: false });
  put('runtime', 'KernelParamStatuses.runtime.talos.dev', 'no.such.key', { current: '', default: '', unsupported: true });
  const volumes = { mounted: [{ label: 'STATE' as const, device: '/dev/vda5', target: '/system/state' }] };
  for (const [id, spec] of mountStatuses(volumes, [{ target: '/system/state', fstype: 'xfs', source: '/dev/vda5', options: ['rw', 'nosuid', 'nodev'] }])) put('runtime', 'MountStatuses.runtime.talos.dev', id, spec);
  put('runtime', 'SecurityStates.talos.dev', 'securitystate', readSecurityState(tmp));
  put('runtime', 'BootStatuses.runtime.bronze.dev', 'boot', {
    installed: true, disk: '/dev/vda', booted: 'A', version: 'v0.1.0', default: 'A', next: '',
    slots: { A: { present: true, version: 'v0.1.0' }, B: { present: false, version: '' } },
    upgrade: { state: 'committed', from: 'B', to: 'A', version: 'v0.1.0' },
  });
  // VolumeStatuses as machined writes them at boot: mounted, found but not mountable, absent.
  put('runtime', 'VolumeStatuses.block.talos.dev', 'STATE', {
    phase: 'ready', type: 'partition', location: '/dev/vda5', mountLocation: '/dev/vda5', partitionIndex: 5, parentLocation: '/dev/vda',
    uuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', partitionUUID: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', size: 104857600, prettySize: '100 MiB',
    filesystem: 'xfs', mountSpec: { targetPath: '/system/state' },
  });
  put('runtime', 'VolumeStatuses.block.talos.dev', 'EPHEMERAL', { phase: 'failed', preFailPhase: 'located', type: 'partition', location: '/dev/vda6', errorMessage: 'mount /dev/vda6 on /var: wrong fs type' });
  put('runtime', 'VolumeStatuses.block.talos.dev', 'META', { phase: 'missing', type: 'partition' });
  // The root as preinit sets it up (verified), and one the kernel found a corrupted block in.
  put('runtime', 'RootfsStatuses.runtime.bronze.dev', 'rootfs', readRootfsStatus(fakeRootfsProbe()));
  put('runtime', 'RootfsStatuses.runtime.bronze.dev', 'corrupted', readRootfsStatus(fakeRootfsProbe({ status: 'C' })));
  put('runtime', 'BootStatuses.runtime.bronze.dev', 'live', { installed: false, booted: '', version: 'v0.1.0' });
  // timed.
  put('runtime', 'TimeStatuses.v1alpha1.talos.dev', 'node', { synced: true, epoch: 2, syncDisabled: false });
  // The cluster registry: Members as machined publishes them (a record from a worker's Hello, and its own).
  const members = new MemoryState();
  const reg = new ClusterRegistry({ log: quiet, state: members, self: () => undefined, etcd: async () => undefined });
  await reg.publish([
    { nodeId: 'node-cp1', addresses: ['10.5.0.2', 'fd00::2'], hostname: 'cp1', machineType: 'controlplane', operatingSystem: 'Bronze (v0.1.0)' },
    memberFromWire(memberToWire({ nodeId: 'node-w1', addresses: ['10.5.0.3'], hostname: 'w1', machineType: 'worker', operatingSystem: 'Bronze (v0.1.0)' })),
  ]);
  samples.push(...(await members.list('cluster', 'Members.cluster.talos.dev')));
  // Containers: ContainerSpecs as the accessor projects ContainerConfig documents; the pull, the instance and its status as the workload controller writes them.
  const workloads = parseConfig(
    'apiVersion: v1alpha1\nkind: ContainerConfig\nname: web\nimage: busybox\nentrypoint: [httpd]\nargs: [-f]\nworkingDir: /srv\nruntime: {}\n'
      .replace('runtime: {}\n', 'runAs: {uid: 65534, gid: 0}\nenvironment: [A=1]\nmounts:\n  - tmpfs: {destination: /tmp, size: 64MiB}\n  - hostPath: {source: /var/web, destination: /www, options: [rw]}\n')
      + 'security: {profile: privileged, capabilities: {add: [NET_ADMIN], drop: [MKNOD]}}\nnetwork: {mode: host}\nresources: {limits: {cpu: 1500m, memory: 512MiB}}\ndependsOn: {networks: [addresses], time: true, paths: [/var/web]}\n',
  );
  for (const d of containerDocs(workloads)) put('containers', 'ContainerSpecs.containers.talos.dev', d.spec.name, d.resource);
  put('containers', 'ContainerImageStatuses.containers.talos.dev', 'web', { phase: 'ready', image: 'docker.io/library/busybox:latest', digest: `sha256:${'a'.repeat(64)}` });
  put('containers', 'ContainerImageStatuses.containers.talos.dev', 'db', { phase: 'failed', image: 'docker.io/library/db:1', error: 'unauthorized' });
  put('containers', 'ContainerInstanceSpecs.containers.talos.dev', 'web-1', {
    containerID: 'web', generation: 1, image: `docker.io/library/busybox@sha256:${'a'.repeat(64)}`, entrypoint: ['httpd'], args: ['-f'], workingDir: '/srv', runAs: { uid: 65534, gid: 0 },
    environment: ['A=1'], mounts: [{ kind: 'tmpfs', destination: '/tmp', size: 67108864 }, { kind: 'hostPath', source: '/var/web', destination: '/www', options: [] }],
    security: { privileged: true, capabilitiesAdd: ['NET_ADMIN'], capabilitiesDrop: ['MKNOD'] }, network: { hostNetwork: true }, resources: { memoryLimit: 536870912, cpuLimit: 1500 },
  });
  put('containers', 'ContainerStatuses.containers.bronze.dev', 'web', { phase: 'running', image: 'docker.io/library/busybox:latest', pid: 4242, starts: 2, startedAt: '2026-08-21T18:00:00.000Z', healthy: false, message: 'health probe: refused (1/3)', hash: '0123456789abcdef' });
  put('containers', 'ContainerStatuses.containers.bronze.dev', 'db', { phase: 'exited', image: 'docker.io/library/db:1', pid: 0, starts: 1, exitCode: 1 });
  // The meta namespace, as machined publishes it.
  const meta = new MemoryState();
  await publishNamespaces(meta, NAMESPACES);
  await publishDefinitions(meta, registry);
  samples.push(...(await meta.list('meta', 'Namespaces.meta.cosi.dev')), ...(await meta.list('meta', 'ResourceDefinitions.meta.cosi.dev')));
});

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const wire = (r: Resource) => toWireResource(r, registry.get(r.metadata.type));
const decoded = (r: Resource): Decoded => {
  const def = registry.get(r.metadata.type) as ResourceDefinition;
  return strictDecode(def.proto!.message, wire(r).spec!.proto_spec as Buffer);
};
const of = (type: string) => samples.filter((r) => r.metadata.type === type);
const ip = (b: unknown) => [...(b as Buffer)].join('.');

describe('resources on Talos\'s wire', () => {
  it('every type in the registry has a message and samples from its producer', () => {
    for (const def of RESOURCE_DEFINITIONS) {
      expect(def.proto, def.type).toBeDefined();
      expect(of(def.type).length, def.type).toBeGreaterThan(0);
    }
  });

  it.each(RESOURCE_DEFINITIONS.map((d) => [d.type]))('%s: proto_spec decodes strictly; yaml_spec is the YAML form', (type) => {
    for (const r of of(type)) {
      const w = wire(r);
      expect(() => decoded(r), `${type}/${r.metadata.id}`).not.toThrow();
      const yaml = YAML.parse(w.spec!.yaml_spec!);
      if (type === MACHINE_CONFIG_TYPE) expect(machineConfigDocuments(yaml)).toEqual({ data: (r.spec as MachineConfigSpec).data }); // only the text travels
      else expect(yaml).toEqual(JSON.parse(JSON.stringify(r.spec)));
    }
  });

  it('every key of every sample spec reaches its message, but those a definition names yamlOnly', () => {
    const left: string[] = [];
    for (const r of samples) {
      const def = registry.get(r.metadata.type)!;
      if (def.proto!.encode) continue; // the config's text: one field
      const unused = unusedKeys(messageType(def.proto!.message), def.proto!.fields ?? {}, r.spec as Record<string, unknown>);
      left.push(...unused.filter((k) => !def.proto!.yamlOnly?.includes(k)).map((k) => `${def.type}/${r.metadata.id}: ${k}`));
    }
    expect(left).toEqual([]);
  });

  it('a field the message does not have, or the wrong wire type, fails the strict read', () => {
    const ok = wire(of('Services.v1alpha1.talos.dev')[0]!).spec!.proto_spec as Buffer;
    expect(() => strictDecode('talos.resource.definitions.v1alpha1.ServiceSpec', Buffer.concat([ok, Buffer.from([0x20, 1])]))).toThrow(/unknown field 4/);
    expect(() => strictDecode('talos.resource.definitions.v1alpha1.ServiceSpec', Buffer.from([0x0a, 0]))).toThrow(/bool with wire type 2/);
    expect(() => strictDecode('talos.resource.definitions.network.RouteStatusSpec', Buffer.from([0x12, 2, 0x78, 1]))).toThrow(/destination: unknown field 15/);
  });

  it('network values are Talos\'s numbers: link types, flags, families, tables, addresses as bytes', () => {
    const eth0 = decoded(of('LinkStatuses.net.talos.dev').find((r) => r.metadata.id === 'eth0')!);
    expect(eth0).toMatchObject({ index: 3, type: 1, mtu: 1400, kind: 'veth', driver: 'virtio_net', duplex: 255, speed_megabits: 1000, link_state: true });
    expect((eth0.flags as number) & 1).toBe(1); // IFF_UP
    expect([...(eth0.hardware_addr as Buffer)].map((x) => x.toString(16).padStart(2, '0')).join(':')).toBe('52:54:00:12:34:56');
    expect(decoded(of('LinkStatuses.net.talos.dev').find((r) => r.metadata.id === 'lo')!)).toMatchObject({ type: 772, queue_disc: 'noqueue' });
    expect(decoded(of('LinkStatuses.net.talos.dev').find((r) => r.metadata.id === 'eth0.7')!)).toMatchObject({ vlan: { vid: 7, protocol: 0x8100 }, alias: 'up', alt_names: ['x'], master_index: 3 });
    const v4 = decoded(of('AddressStatuses.net.talos.dev').find((r) => r.metadata.id.endsWith('/192.168.50.10/24'))!);
    expect(v4).toMatchObject({ family: 2, link_name: 'eth0' });
    expect(ip((v4.address as Decoded).ip)).toBe('192.168.50.10');
    expect((v4.address as Decoded).prefix_length).toBe(24);
    expect(ip((v4.local as Decoded).ip)).toBe('192.168.50.10');
    const dflt = decoded(of('RouteStatuses.net.talos.dev').find((r) => (r.spec as { dst: string; family: string }).dst === '' && (r.spec as { family: string }).family === 'inet4')!);
    expect(dflt).toMatchObject({ family: 2, table: 254, priority: 1024, protocol: 16, type: 1 });
    expect(dflt.destination).toBeUndefined(); // a default route: no destination, as Talos
    expect(ip((dflt.gateway as Decoded).ip)).toBe('192.168.50.1');
    expect(decoded(of('NodeAddresses.net.talos.dev')[0]!).addresses).toHaveLength(current().length);
    expect(decoded(of('ResolverStatuses.net.talos.dev')[0]!).dns_servers).toHaveLength(2);
    expect(decoded(of('TimeServerStatuses.net.talos.dev')[0]!)).toEqual({ ntp_servers: ['time.cloudflare.com', '10.0.2.2'] });
  });

  it('block, runtime, config, time and meta values', () => {
    expect(decoded(of('Disks.block.talos.dev').find((r) => r.metadata.id === 'vda')!)).toMatchObject({ dev_path: expect.stringMatching(/\/vda$/), size: 16384 * 512, pretty_size: '8.4 MB', transport: 'virtio', io_size: 512 });
    expect(decoded(of('DiscoveredVolumes.block.talos.dev').find((r) => r.metadata.id === 'vda2')!)).toMatchObject({ name: 'ext4', label: 'STATE', partition_label: 'STATE', partition_index: 2, type: 'partition' });
    expect(decoded(of('BlockDevices.block.talos.dev').find((r) => r.metadata.id === 'vda1')!)).toMatchObject({ type: 'partition', major: 252, minor: 1, partition_number: 1, generation: 1, parent: 'vda' });
    expect(decoded(of('Services.v1alpha1.talos.dev')[0]!)).toEqual({ running: true, healthy: true });
    expect(decoded(of('MachineStatuses.runtime.talos.dev')[0]!)).toEqual({ stage: 3, status: { unmet_conditions: [{ name: 'config', reason: 'no configuration' }] } });
    expect(decoded(of('MachineStatuses.runtime.talos.dev')[1]!)).toEqual({ stage: 4, status: { ready: true } });
    const mc = decoded(of(MACHINE_CONFIG_TYPE)[0]!);
    expect(machineConfigDocuments(String(mc.yaml_marshalled))).toEqual({ data: (of(MACHINE_CONFIG_TYPE)[0]!.spec as MachineConfigSpec).data });
    expect(wire(of(MACHINE_CONFIG_TYPE)[0]!).metadata!.annotations).toEqual({ 'talos.dev/yaml-spec': '1' });
    expect(typeof YAML.parse(wire(of(MACHINE_CONFIG_TYPE)[0]!).spec!.yaml_spec!)).toBe('string'); // one YAML string, as Talos
    const pmc = of('ParsedMachineConfigs.config.bronze.dev')[0]!;
    expect(YAML.parse(String(decoded(pmc).yaml_marshalled))).toEqual(JSON.parse(JSON.stringify(pmc.spec))); // the typed configuration, as YAML (JSON)
    expect(decoded(of('TimeStatuses.v1alpha1.talos.dev')[0]!)).toEqual({ synced: true, epoch: 2 });
    expect(decoded(of('KernelParamStatuses.runtime.talos.dev')[0]!)).toEqual({ current: '1', default: '0' });
    expect(decoded(of('MountStatuses.runtime.talos.dev')[0]!)).toEqual({ source: '/dev/vda5', target: '/system/state', filesystem_type: 'xfs', options: ['rw', 'nosuid', 'nodev'] });
    expect(decoded(of('SecurityStates.talos.dev')[0]!)).toEqual({}); // no Secure Boot, no UKI, SELinux disabled (0)
    expect(decoded(of('BootStatuses.runtime.bronze.dev')[0]!)).toMatchObject({ installed: true, booted: 'A', slots: { A: { present: true, version: 'v0.1.0' }, B: {} }, upgrade: { state: 'committed' } });
    const [cp1, w1] = ['cp1', 'w1'].map((id) => decoded(of('Members.cluster.talos.dev').find((r) => r.metadata.id === id)!));
    expect(cp1).toMatchObject({ node_id: 'node-cp1', hostname: 'cp1', machine_type: 2, operating_system: 'Bronze (v0.1.0)' });
    expect((cp1!.addresses as Array<{ ip: Buffer }>).map((a) => a.ip.length)).toEqual([4, 16]);
    expect(w1).toMatchObject({ node_id: 'node-w1', hostname: 'w1', machine_type: 3 });
    const rd = decoded(of('ResourceDefinitions.meta.cosi.dev').find((r) => r.metadata.id === 'machineconfigs.config.talos.dev')!);
    expect(rd).toMatchObject({ resource_type: 'MachineConfigs.config.talos.dev', display_type: 'MachineConfig', default_namespace: 'config', sensitivity: 1 });
    const links = decoded(of('ResourceDefinitions.meta.cosi.dev').find((r) => r.metadata.id === 'linkstatuses.net.talos.dev')!);
    expect(links).toMatchObject({ aliases: ['link', 'links', 'linkstatus', 'ls'], print_columns: expect.arrayContaining([{ name: 'Oper State', json_path: '{.operationalState}' }]) });
    expect(links.sensitivity).toBeUndefined(); // NON_SENSITIVE: the default, left out
    expect(decoded(of('Namespaces.meta.cosi.dev').find((r) => r.metadata.id === 'network')!)).toEqual({ description: NAMESPACES.network });
  });
});

describe('container resources on Talos\'s wire', () => {
  it('carry Talos\'s fields: the image, limits in bytes and millicores, mounts, the pull\'s phase as its enum number', () => {
    const spec = decoded(of('ContainerSpecs.containers.talos.dev')[0]!);
    expect(spec).toMatchObject({
      image: { ref: 'docker.io/library/busybox:latest' }, entrypoint: ['httpd'], args: ['-f'], working_dir: '/srv', run_as: { uid: 65534 }, environment: ['A=1'],
      mounts: [{ kind: 'tmpfs', destination: '/tmp', size: 67108864 }, { kind: 'hostPath', source: '/var/web', destination: '/www' }],
      security: { privileged: true, capabilities_add: ['NET_ADMIN'], capabilities_drop: ['MKNOD'] }, network: { host_network: true },
      resources: { memory_limit: 536870912, cpu_limit: 1500 }, depends_on: { paths: ['/var/web'], networks: ['addresses'], time: true },
    });
    expect(decoded(of('ContainerImageStatuses.containers.talos.dev')[0]!)).toMatchObject({ phase: 2, digest: `sha256:${'a'.repeat(64)}` });
    expect(decoded(of('ContainerImageStatuses.containers.talos.dev')[1]!)).toMatchObject({ phase: 3, error: 'unauthorized' });
    expect(decoded(of('ContainerInstanceSpecs.containers.talos.dev')[0]!)).toMatchObject({ container_id: 'web', generation: 1, mounts: [{ kind: 'tmpfs', size: 67108864 }, { kind: 'hostPath', source: '/var/web' }] });
    expect(decoded(of('ContainerStatuses.containers.bronze.dev')[0]!)).toMatchObject({ phase: 'running', pid: 4242, starts: 2, healthy: false });
    expect(decoded(of('ContainerStatuses.containers.bronze.dev')[1]!)).toMatchObject({ phase: 'exited', exit_code: 1 });
    expect(decoded(of('ContainerStatuses.containers.bronze.dev')[1]!).healthy).toBeUndefined(); // no probe: no health
  });
});

function current(): string[] {
  return (of('NodeAddresses.net.talos.dev')[0]!.spec as { addresses: string[] }).addresses;
}
