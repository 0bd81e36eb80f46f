// The protos against Talos's wire contract: field numbers checked by encoding with protobufjs
// and reading the raw wire back, the `repeated messages` + common.Metadata envelope on every
// reply, and which RPCs stream.
import protobuf from 'protobufjs';
import lightProtobuf from 'protobufjs/light.js';
import { describe, expect, it, vi } from 'vitest';
import { LOADER_OPTIONS, PROTO_FILES, grpcObject, messageType, protoRoot, serviceDefinition, serviceNames } from './protos.ts';

type Field = { field: number; wire: number; value: bigint | Uint8Array | number };

/** Decodes one level of protobuf wire format, without any schema. */
function wire(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error('truncated varint');
      const b = buf[i++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    const w = tag & 7;
    if (w === 0) out.push({ field, wire: w, value: varint() });
    else if (w === 2) {
      const n = Number(varint());
      out.push({ field, wire: w, value: new Uint8Array(buf.subarray(i, i + n)) }); // a plain copy, not a Buffer
      i += n;
    } else if (w === 1) {
      out.push({ field, wire: w, value: new DataView(buf.buffer, buf.byteOffset + i, 8).getBigUint64(0, true) });
      i += 8;
    } else if (w === 5) {
      out.push({ field, wire: w, value: new DataView(buf.buffer, buf.byteOffset + i, 4).getUint32(0, true) });
      i += 4;
    } else throw new Error(`unexpected wire type ${w}`);
  }
  return out;
}

const VARINT = 0;
const LEN = 2;
const text = (s: string) => new TextEncoder().encode(s);

function encode(type: string, value: Record<string, unknown>): Uint8Array {
  const t = protoRoot().lookupType(type);
  const err = t.verify(value);
  if (err) throw new Error(`${type}: ${err}`);
  return t.encode(t.fromObject(value)).finish();
}

/** The single length-delimited field `n` of a message, decoded one level further. */
function sub(fields: Field[], n: number): Field[] {
  const f = fields.filter((x) => x.field === n);
  expect(f, `field ${n}`).toHaveLength(1);
  expect(f[0]!.wire).toBe(LEN);
  return wire(f[0]!.value as Uint8Array);
}

describe('proto files', () => {
  it('all parse and resolve, and load as gRPC services', () => {
    expect(PROTO_FILES).toEqual([
      'google/rpc/status.proto',
      'common/common.proto',
      'machine/machine.proto',
      'machine/image.proto',
      'inspect/inspect.proto',
      'time/time.proto',
      'security/security.proto',
      'cosi/v1alpha1/resource.proto',
      'cosi/v1alpha1/state.proto',
      'cosi/v1alpha1/meta.proto',
      'resource/definitions/enums/enums.proto',
      'resource/definitions/block/block.proto',
      'resource/definitions/network/network.proto',
      'resource/definitions/runtime/runtime.proto',
      'resource/definitions/time/time.proto',
      'resource/definitions/v1alpha1/v1alpha1.proto',
      'resource/definitions/containers/containers.proto',
      'resource/config/config.proto',
      'bronze/resource/definitions/runtime.proto',
      'bronze/resource/definitions/config.proto',
      'bronze/resource/definitions/containers.proto',
      'resource/definitions/cluster/cluster.proto',
      'bronze/cluster/registry.proto',
      'etcd/kv.proto',
      'etcd/rpc.proto',
      'grpc/health/v1/health.proto',
    ]);
    expect(grpcObject()).toBeTruthy();
    for (const s of ['machine.MachineService', 'inspect.InspectService', 'time.TimeService', 'securityapi.SecurityService', 'cosi.resource.State', 'grpc.health.v1.Health']) {
      expect(Object.keys(serviceDefinition(s)).length, s).toBeGreaterThan(0);
    }
  });

  it('declare the RPCs Bronze implements, by Talos name', () => {
    const names = (s: string) => Object.keys(serviceDefinition(s)).sort();
    expect(names('machine.MachineService')).toEqual(
      [
        'ApplyConfiguration', 'CPUFreqStats', 'CPUInfo', 'Containers', 'Copy', 'DiskStats', 'DiskUsage', 'Dmesg', 'EtcdSnapshot', 'Events',
        'Bootstrap', 'EtcdMemberList', 'EtcdRemoveMemberByID', 'EtcdLeaveCluster', 'EtcdForfeitLeadership', 'EtcdRecover', 'EtcdAlarmList',
        'EtcdAlarmDisarm', 'EtcdDefragment', 'EtcdStatus',
        'GenerateClientConfiguration', 'Hostname', 'Install', 'List', 'LoadAvg', 'Logs', 'Memory', 'Mounts', 'Netstat', 'NetworkDeviceStats',
        'PacketCapture', 'Processes', 'Read', 'Reboot', 'Repair', 'Reset', 'Restart', 'Rollback', 'ServiceList', 'ServiceRestart', 'ServiceStart', 'ServiceStop',
        'Shutdown', 'Stats', 'SystemStat', 'Upgrade', 'UpgradeStream', 'Version', 'MetaWrite', 'MetaDelete',
      ].sort(),
    );
    expect(names('machine.ImageService')).toEqual(['Import', 'List', 'Pull', 'Remove', 'Verify']);
    expect(names('time.TimeService')).toEqual(['Time', 'TimeCheck']);
    expect(names('inspect.InspectService')).toEqual(['ControllerRuntimeDependencies']);
    expect(names('securityapi.SecurityService')).toEqual(['Certificate']);
    expect(names('cosi.resource.State')).toEqual(['Create', 'Destroy', 'Get', 'List', 'Update', 'Watch']);
    expect(serviceDefinition('machine.MachineService').Reboot!.path).toBe('/machine.MachineService/Reboot');
    expect(serviceDefinition('cosi.resource.State').Watch!.path).toBe('/cosi.resource.State/Watch');
  });

  it('mark exactly the streaming RPCs as server streaming, and only UpgradeStream (bidi), EtcdRecover and ImageService Import as client streaming', () => {
    const streaming = new Set([
      '/machine.MachineService/Copy',
      '/machine.MachineService/DiskUsage',
      '/machine.MachineService/Dmesg',
      '/machine.MachineService/EtcdSnapshot',
      '/machine.MachineService/PacketCapture',
      '/machine.MachineService/Events',
      '/machine.MachineService/Install',
      '/machine.MachineService/Repair',
      '/machine.MachineService/UpgradeStream',
      '/machine.MachineService/List',
      '/machine.MachineService/Logs',
      '/machine.MachineService/Read',
      '/cosi.resource.State/List',
      '/cosi.resource.State/Watch',
      '/grpc.health.v1.Health/Watch',
      '/machine.ImageService/List',
      '/machine.ImageService/Pull',
    ]);
    // EtcdRecover: the client uploads a snapshot (Talos's), one reply; so does ImageService's Import (an archive).
    const clientStreaming = new Set(['/machine.MachineService/UpgradeStream', '/machine.MachineService/EtcdRecover', '/machine.ImageService/Import']);
    const seen = new Set<string>();
    for (const s of ['machine.MachineService', 'machine.ImageService', 'inspect.InspectService', 'time.TimeService', 'securityapi.SecurityService', 'cosi.resource.State', 'grpc.health.v1.Health']) {
      for (const m of Object.values(serviceDefinition(s))) {
        expect(m.responseStream, m.path).toBe(streaming.has(m.path));
        expect(m.requestStream, m.path).toBe(clientStreaming.has(m.path));
        seen.add(m.path);
      }
    }
    for (const p of streaming) expect(seen.has(p), p).toBe(true);
    // What the streams carry, as in Talos.
    const md = protoRoot().lookupService('machine.MachineService').methods;
    expect(md.Logs!.resolvedResponseType!.fullName).toBe('.common.Data');
    expect(md.Dmesg!.resolvedResponseType!.fullName).toBe('.common.Data');
    expect(md.Read!.resolvedResponseType!.fullName).toBe('.common.Data');
    expect(md.Events!.resolvedResponseType!.fullName).toBe('.machine.Event');
    expect(md.List!.resolvedResponseType!.fullName).toBe('.machine.FileInfo');
    expect(md.Version!.resolvedRequestType!.fullName).toBe('.google.protobuf.Empty');
    expect(md.UpgradeStream!.resolvedRequestType!.fullName).toBe('.machine.UpgradeStreamRequest');
    expect(md.UpgradeStream!.resolvedResponseType!.fullName).toBe('.machine.Progress');
    expect(md.Install!.resolvedRequestType!.fullName).toBe('.machine.InstallRequest');
    expect(md.Install!.resolvedResponseType!.fullName).toBe('.machine.Progress');
    expect(md.Repair!.resolvedRequestType!.fullName).toBe('.machine.RepairRequest');
    expect(md.Repair!.resolvedResponseType!.fullName).toBe('.machine.Progress');
  });
});

describe('wire contract (encoded, then read back as raw wire)', () => {
  it('common.Metadata: hostname=1, error=2, status=3 as google.rpc.Status{code=1, message=2, details=3}', () => {
    const f = wire(
      encode('common.Metadata', {
        hostname: 'node-1',
        error: 'boom',
        status: { code: 14, message: 'unavailable', details: [{ type_url: 't/x', value: text('v') }] },
      }),
    );
    expect(f.slice(0, 2)).toEqual([
      { field: 1, wire: LEN, value: text('node-1') },
      { field: 2, wire: LEN, value: text('boom') },
    ]);
    const status = sub(f, 3);
    expect(status.slice(0, 2)).toEqual([
      { field: 1, wire: VARINT, value: 14n },
      { field: 2, wire: LEN, value: text('unavailable') },
    ]);
    expect(sub(status, 3)).toEqual([
      { field: 1, wire: LEN, value: text('t/x') },
      { field: 2, wire: LEN, value: text('v') },
    ]);
  });

  it('machine.VersionResponse: messages=1 → Version{metadata=1, version=2, platform=3, features=4}', () => {
    const top = wire(
      encode('machine.VersionResponse', {
        messages: [{ metadata: { hostname: 'n' }, version: { tag: 'v1', arch: 'amd64' }, platform: { name: 'metal' }, features: { rbac: true } }],
      }),
    );
    expect(top.map((x) => x.field)).toEqual([1]);
    const v = sub(top, 1);
    expect(v.map((x) => x.field)).toEqual([1, 2, 3, 4]);
    expect(sub(v, 1)).toEqual([{ field: 1, wire: LEN, value: text('n') }]);
    expect(sub(v, 2)).toEqual([
      { field: 1, wire: LEN, value: text('v1') },
      { field: 6, wire: LEN, value: text('amd64') },
    ]);
    expect(sub(v, 3)).toEqual([{ field: 1, wire: LEN, value: text('metal') }]);
    expect(sub(v, 4)).toEqual([{ field: 1, wire: VARINT, value: 1n }]);
  });

  it('machine.ServiceInfo: id=1, state=2, events=3{events=1{msg=1, state=2, ts=3}}, health=4{unknown=1, healthy=2, last_message=3, last_change=4}', () => {
    const f = wire(
      encode('machine.ServiceInfo', {
        id: 'apid',
        state: 'Running',
        events: { events: [{ msg: 'started', state: 'Running', ts: { seconds: 5 } }] },
        health: { unknown: true, healthy: true, last_message: 'ok', last_change: { seconds: 7 } },
      }),
    );
    expect(f.slice(0, 2)).toEqual([
      { field: 1, wire: LEN, value: text('apid') },
      { field: 2, wire: LEN, value: text('Running') },
    ]);
    const ev = sub(sub(f, 3), 1);
    expect(ev.slice(0, 2)).toEqual([
      { field: 1, wire: LEN, value: text('started') },
      { field: 2, wire: LEN, value: text('Running') },
    ]);
    expect(sub(ev, 3)).toEqual([{ field: 1, wire: VARINT, value: 5n }]);
    const h = sub(f, 4);
    expect(h.slice(0, 3)).toEqual([
      { field: 1, wire: VARINT, value: 1n },
      { field: 2, wire: VARINT, value: 1n },
      { field: 3, wire: LEN, value: text('ok') },
    ]);
    expect(sub(h, 4)).toEqual([{ field: 1, wire: VARINT, value: 7n }]);
  });

  it('machine.LogsRequest: namespace=1, id=2, driver=3, follow=4, tail_lines=5', () => {
    expect(wire(encode('machine.LogsRequest', { namespace: 'system', id: 'apid', driver: 1, follow: true, tail_lines: 42 }))).toEqual([
      { field: 1, wire: LEN, value: text('system') },
      { field: 2, wire: LEN, value: text('apid') },
      { field: 3, wire: VARINT, value: 1n },
      { field: 4, wire: VARINT, value: 1n },
      { field: 5, wire: VARINT, value: 42n },
    ]);
  });

  it('machine.RebootRequest: mode=1, POWERCYCLE=1, FORCE=2 (Talos 1.12)', () => {
    expect(wire(encode('machine.RebootRequest', { mode: 1 }))).toEqual([{ field: 1, wire: VARINT, value: 1n }]);
    expect(protoRoot().lookupEnum('machine.RebootRequest.Mode').values).toEqual({ DEFAULT: 0, POWERCYCLE: 1, FORCE: 2 });
  });

  it('etcd messages: EtcdMember id=2..is_learner=6, EtcdMemberStatus member_id=10, BootstrapRequest recover_etcd=1', () => {
    expect(wire(encode('machine.EtcdMember', { id: 7, hostname: 'a', peer_urls: ['p'], client_urls: ['c'], is_learner: true })).map((f) => f.field)).toEqual([2, 3, 4, 5, 6]);
    expect(wire(encode('machine.EtcdMemberStatus', { member_id: 9, protocol_version: '3.4' })).map((f) => f.field)).toEqual([1, 10]);
    expect(wire(encode('machine.BootstrapRequest', { recover_etcd: true, recover_skip_hash_check: true }))).toEqual([
      { field: 1, wire: VARINT, value: 1n },
      { field: 2, wire: VARINT, value: 1n },
    ]);
    // Member ids use all 64 bits: a string in, the same number on the wire.
    const removeType = protoRoot().lookupType('machine.EtcdRemoveMemberByIDRequest');
    expect(wire(removeType.encode(removeType.fromObject({ member_id: '18446744073709551615' })).finish())).toEqual([{ field: 1, wire: VARINT, value: 18446744073709551615n }]);
  });

  it('machine.ApplyConfigurationRequest: data=1, mode=4, dry_run=5, try_mode_timeout=6', () => {
    const f = wire(encode('machine.ApplyConfigurationRequest', { data: text('version: v1alpha1'), mode: 3, dry_run: true, try_mode_timeout: { seconds: 60 } }));
    expect(f.slice(0, 3)).toEqual([
      { field: 1, wire: LEN, value: text('version: v1alpha1') },
      { field: 4, wire: VARINT, value: 3n },
      { field: 5, wire: VARINT, value: 1n },
    ]);
    expect(sub(f, 6)).toEqual([{ field: 1, wire: VARINT, value: 60n }]);
  });

  it('machine.Event: metadata=1, data=2 (Any), id=3, actor_id=4; common.Data: metadata=1, bytes=2', () => {
    const f = wire(encode('machine.Event', { metadata: { hostname: 'n' }, data: { type_url: 'talos/runtime/machine.SequenceEvent', value: text('x') }, id: 'e1', actor_id: 'a1' }));
    expect(f.map((x) => x.field)).toEqual([1, 2, 3, 4]);
    expect(sub(f, 2)[0]).toEqual({ field: 1, wire: LEN, value: text('talos/runtime/machine.SequenceEvent') });
    expect(wire(encode('common.Data', { bytes: text('log line\n') }))).toEqual([{ field: 2, wire: LEN, value: text('log line\n') }]);
  });

  it('cosi.resource.Metadata and Spec, by number', () => {
    const f = wire(
      encode('cosi.resource.Metadata', {
        namespace: 'network',
        type: 'AddressStatuses.net.talos.dev',
        id: 'eth0/10.0.0.2/24',
        version: '3',
        owner: 'network.AddressStatusController',
        phase: 'running',
        created: { seconds: 1 },
        updated: { seconds: 2 },
        finalizers: ['f'],
        labels: { k: 'v' },
        annotations: { a: 'b' },
      }),
    );
    expect(f.map((x) => x.field)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(f[0]!.value).toEqual(text('network'));
    expect(f[3]!.value).toEqual(text('3'));
    expect(f[5]!.value).toEqual(text('running'));
    expect(sub(f, 10)).toEqual([
      { field: 1, wire: LEN, value: text('k') },
      { field: 2, wire: LEN, value: text('v') },
    ]);
    expect(wire(encode('cosi.resource.Spec', { proto_spec: text('p'), yaml_spec: 'y: 1' }))).toEqual([
      { field: 1, wire: LEN, value: text('p') },
      { field: 2, wire: LEN, value: text('y: 1') },
    ]);
    const ev = wire(encode('cosi.resource.WatchResponse', { event: [{ resource: { metadata: { id: 'x' } }, event_type: 2, old: {} }] }));
    expect(sub(ev, 1).map((x) => [x.field, x.wire])).toEqual([
      [1, LEN],
      [2, VARINT],
      [3, LEN],
    ]);
  });
});

describe('field numbers by name (Talos / COSI contract table)', () => {
  const contract: Record<string, Record<string, number>> = {
    'google.rpc.Status': { code: 1, message: 2, details: 3 },
    'common.Metadata': { hostname: 1, error: 2, status: 3 },
    'common.Error': { code: 1, message: 2, details: 3 },
    'machine.ServiceInfo': { id: 1, state: 2, events: 3, health: 4 },
    'machine.ServiceEvent': { msg: 1, state: 2, ts: 3 },
    'machine.ServiceStartRequest': { id: 1 },
    'machine.ServiceStart': { metadata: 1, resp: 2 },
    'machine.ServiceList': { metadata: 1, services: 2 },
    'machine.ResetRequest': { graceful: 1, reboot: 2, system_partitions_to_wipe: 3, user_disks_to_wipe: 4, mode: 5 },
    'machine.ResetPartitionSpec': { label: 1, wipe: 2 },
    'machine.UpgradeRequest': { image: 1, preserve: 2, stage: 3, force: 4, reboot_mode: 5 },
    'machine.Upgrade': { metadata: 1, ack: 2, actor_id: 3 },
    'machine.Reboot': { metadata: 1, actor_id: 2 },
    'machine.UpgradeStreamRequest': { request: 1, size: 2, chunk: 3 },
    'machine.InstallRequest': { disk: 1, wipe: 2, image: 3, extra_kernel_args: 4 },
    'machine.RepairRequest': { labels: 1, zero_log: 2 },
    'machine.Progress': { metadata: 1, stage: 2, message: 3, done: 4, total: 5 },
    'machine.ShutdownRequest': { force: 1 },
    'machine.EventsRequest': { tail_events: 1, tail_id: 2, tail_seconds: 3, with_actor_id: 4 },
    'machine.SequenceEvent': { sequence: 1, action: 2, error: 3 },
    'machine.ServiceStateEvent': { service: 1, action: 2, message: 3, health: 4 },
    'machine.MachineStatusEvent': { stage: 1, status: 2 },
    'machine.ListRequest': { root: 1, recurse: 2, recursion_depth: 3, types: 4 },
    'machine.FileInfo': { metadata: 1, name: 2, size: 3, mode: 4, modified: 5, is_dir: 6, error: 7, link: 8, relative_name: 9, uid: 10, gid: 11 },
    'machine.DmesgRequest': { follow: 1, tail: 2 },
    'machine.ReadRequest': { path: 1 },
    'machine.LoadAvg': { metadata: 1, load1: 2, load5: 3, load15: 4 },
    'machine.MountStat': { filesystem: 1, size: 2, available: 3, mounted_on: 4 },
    'machine.ProcessInfo': { pid: 1, ppid: 2, state: 3, threads: 4, cpu_time: 5, virtual_memory: 6, resident_memory: 7, command: 8, executable: 9, args: 10 },
    'machine.NetworkDeviceStats': { metadata: 1, total: 2, devices: 3 },
    'machine.GenerateClientConfigurationRequest': { roles: 1, crt_ttl: 2 },
    'machine.GenerateClientConfiguration': { metadata: 1, ca: 2, crt: 3, key: 4, talosconfig: 5 },
    'machine.ApplyConfiguration': { metadata: 1, warnings: 2, mode: 3, mode_details: 4 },
    'machine.CopyRequest': { root_path: 1 },
    'machine.DiskUsageRequest': { recursion_depth: 1, all: 2, threshold: 3, paths: 4 },
    'machine.DiskUsageInfo': { metadata: 1, name: 2, size: 3, error: 4, relative_name: 5 },
    'machine.CPUsFreqStats': { metadata: 1, cpu_freq_stats: 2 },
    'machine.CPUFreqStats': { current_frequency: 1, minimum_frequency: 2, maximum_frequency: 3, governor: 4 },
    'machine.NetstatRequest': { filter: 1, feature: 2, l4proto: 3, netns: 4 },
    'machine.NetstatRequest.L4proto': { tcp: 1, tcp6: 2, udp: 3, udp6: 4, udplite: 5, udplite6: 6, raw: 7, raw6: 8 },
    'machine.NetstatRequest.NetNS': { hostnetwork: 1, netns: 2, allnetns: 3 },
    'machine.ConnectRecord': {
      l4proto: 1, localip: 2, localport: 3, remoteip: 4, remoteport: 5, state: 6, txqueue: 7, rxqueue: 8, tr: 9, timerwhen: 10,
      retrnsmt: 11, uid: 12, timeout: 13, inode: 14, ref: 15, pointer: 16, process: 17, netns: 18,
    },
    'machine.Netstat': { metadata: 1, connectrecord: 2 },
    'machine.PacketCaptureRequest': { interface: 1, promiscuous: 2, snap_len: 3, bpf_filter: 4 },
    'machine.BPFInstruction': { op: 1, jt: 2, jf: 3, k: 4 },
    'machine.ContainersRequest': { namespace: 1, driver: 2 },
    'machine.ContainerInfo': { namespace: 1, id: 2, image: 3, pid: 4, status: 5, pod_id: 6, name: 7, network_namespace: 8, internal_id: 9, uid: 10 },
    'machine.RestartRequest': { namespace: 1, id: 2, driver: 3 },
    'common.ContainerdInstance': { driver: 1, namespace: 2 },
    'machine.ImageServiceListResponse': { name: 1, digest: 2, size: 3, created_at: 4, labels: 5 },
    'machine.ImageServicePullRequest': { containerd: 1, image_ref: 3 },
    'machine.ImageServicePullResponse': { name: 1, pull_progress: 2 },
    'machine.ImageServicePullProgress': { layer_id: 1, progress: 2 },
    'machine.ImageServicePullLayerProgress': { status: 1, elapsed: 2, offset: 3, total: 4 },
    'machine.ImageServiceImportRequest': { containerd: 1, image_chunk: 2 },
    'machine.ImageServiceImportResponse': { name: 1 },
    'machine.ImageServiceRemoveRequest': { containerd: 1, image_ref: 2 },
    'machine.ImageServiceVerifyRequest': { image_ref: 1, credentials: 2 },
    'machine.ImageServiceVerifyResponse': { verified: 1, message: 2, digested_image_ref: 3 },
    'machine.Container': { metadata: 1, containers: 2 },
    'machine.StatsRequest': { namespace: 1, driver: 2 },
    'machine.Stat': { namespace: 1, id: 2, memory_usage: 4, cpu_usage: 5, pod_id: 6, name: 7 },
    'machine.Stats': { metadata: 1, stats: 2 },
    'machine.MetaWriteRequest': { key: 1, value: 2 },
    'machine.MetaWrite': { metadata: 1 },
    'machine.MetaDeleteRequest': { key: 1 },
    'machine.MetaDelete': { metadata: 1 },
    'inspect.ControllerRuntimeDependency': { metadata: 1, edges: 2 },
    'inspect.ControllerDependencyEdge': { controller_name: 1, edge_type: 2, resource_namespace: 3, resource_type: 4, resource_id: 5 },
    'time.TimeRequest': { server: 1 },
    'time.Time': { metadata: 1, server: 2, localtime: 3, remotetime: 4 },
    'securityapi.CertificateRequest': { csr: 1 },
    'securityapi.CertificateResponse': { ca: 1, crt: 2 },
    'cosi.resource.Resource': { metadata: 1, spec: 2 },
    'cosi.resource.Event': { resource: 1, event_type: 2, old: 3, error: 4, bookmark: 5 },
    'cosi.resource.GetRequest': { namespace: 1, type: 2, id: 3, options: 4 },
    'cosi.resource.ListRequest': { namespace: 1, type: 2, options: 3 },
    'cosi.resource.UpdateRequest': { new_resource: 2, options: 3 },
    'cosi.resource.WatchRequest': { namespace: 1, type: 2, id: 3, options: 4, api_version: 5 },
    'cosi.resource.WatchOptions': { bootstrap_contents: 1, tail_events: 2, label_query: 3, id_query: 4, aggregated: 5, start_from_bookmark: 6, bootstrap_bookmark: 7 },
    'cosi.resource.LabelTerm': { key: 1, op: 2, value: 3, invert: 5 },
  };
  for (const [type, fields] of Object.entries(contract)) {
    it(type, () => {
      const t = protoRoot().lookupType(type);
      expect(Object.fromEntries(Object.entries(t.fields).map(([n, f]) => [n, f.id]))).toEqual(fields);
    });
  }

  it('enum values that clients switch on', () => {
    const e = (n: string) => protoRoot().lookupEnum(n).values;
    expect(e('machine.ApplyConfigurationRequest.Mode')).toEqual({ REBOOT: 0, AUTO: 1, NO_REBOOT: 2, STAGED: 3, TRY: 4 });
    expect(e('machine.ServiceStateEvent.Action')).toMatchObject({ INITIALIZED: 0, RUNNING: 3, FAILED: 6, SKIPPED: 7, STARTING: 8 });
    expect(e('machine.MachineStatusEvent.MachineStage')).toMatchObject({ BOOTING: 1, RUNNING: 4, UPGRADING: 8 });
    expect(e('machine.ResetRequest.WipeMode')).toEqual({ ALL: 0, SYSTEM_DISK: 1, USER_DISKS: 2 });
    expect(e('cosi.resource.EventType')).toEqual({ CREATED: 0, UPDATED: 1, DESTROYED: 2, BOOTSTRAPPED: 3, ERRORED: 4, NOOP: 5 });
    expect(e('common.Code')).toEqual({ FATAL: 0, LOCKED: 1, CANCELED: 2 });
    expect(e('inspect.DependencyEdgeType')).toEqual({ OUTPUT_EXCLUSIVE: 0, OUTPUT_SHARED: 3, INPUT_STRONG: 1, INPUT_WEAK: 2, INPUT_DESTROY_READY: 4 });
  });

  it('every machine and time reply is the `repeated messages = 1` envelope of a message whose field 1 is common.Metadata', () => {
    const root = protoRoot();
    const checked: string[] = [];
    for (const svc of ['machine.MachineService', 'inspect.InspectService', 'time.TimeService']) {
      for (const m of Object.values(root.lookupService(svc).methods)) {
        const res = m.resolvedResponseType!;
        let item: protobuf.Type = res;
        if (!m.responseStream) {
          const messages = res.fields.messages;
          expect(messages?.id, `${res.fullName}.messages`).toBe(1);
          expect(messages?.repeated, `${res.fullName}.messages`).toBe(true);
          expect(Object.keys(res.fields), res.fullName).toEqual(['messages']);
          item = messages!.resolvedType as protobuf.Type;
        }
        const md = item.fieldsById[1];
        expect(md?.name, item.fullName).toBe('metadata');
        expect(md?.resolvedType?.fullName, item.fullName).toBe('.common.Metadata');
        checked.push(m.name);
      }
    }
    expect(checked.length).toBe(53);
  });
});

describe('service definitions made without proto-loader', () => {
  // @grpc/proto-loader is what Bronze used before; its conversions are the reference.
  const reference = async () => {
    const protoLoader = await import('@grpc/proto-loader');
    return protoLoader.fromJSON(protoRoot().toJSON(), LOADER_OPTIONS);
  };

  it('have the same methods, paths and streaming flags as proto-loader made', async () => {
    const ref = await reference();
    for (const name of serviceNames()) {
      const theirs = ref[name] as Record<string, { path: string; requestStream: boolean; responseStream: boolean }>;
      const ours = serviceDefinition(name);
      expect(Object.keys(ours).sort(), name).toEqual(Object.keys(theirs).sort());
      for (const [m, d] of Object.entries(ours)) {
        expect({ path: d.path, requestStream: d.requestStream, responseStream: d.responseStream }, `${name}/${m}`).toEqual({ path: theirs[m]!.path, requestStream: theirs[m]!.requestStream, responseStream: theirs[m]!.responseStream });
      }
    }
  });

  it('of one method at a time build from that method\'s own messages alone, with its shape', async () => {
    const ref = await reference();
    for (const name of serviceNames()) {
      const theirs = ref[name] as Record<string, { path: string; requestStream: boolean; responseStream: boolean }>;
      for (const m of Object.keys(theirs)) {
        const ours = serviceDefinition(name, [m]);
        expect(Object.keys(ours), `${name}/${m}`).toEqual([m]);
        expect(ours[m]!.path).toBe(theirs[m]!.path);
        expect([ours[m]!.requestStream, ours[m]!.responseStream], `${name}/${m}`).toEqual([theirs[m]!.requestStream, theirs[m]!.responseStream]);
      }
    }
    expect(() => serviceDefinition('machine.MachineService', ['NoSuchMethod'])).toThrow(/unknown gRPC method machine.MachineService\/NoSuchMethod/);
    expect(() => serviceDefinition('no.Such')).toThrow(/unknown gRPC service no.Such/);
  });

  it('build a method\'s types only when its first message is, and once', () => {
    const built = vi.spyOn(lightProtobuf.Type, 'fromJSON');
    try {
      // A method list no other test asks for: its definition is made here.
      const def = serviceDefinition('machine.MachineService', ['Hostname', 'Version']);
      expect(built).not.toHaveBeenCalled();
      const reply = { messages: [{ metadata: { hostname: 'n1' }, version: { tag: 'v1' } }] };
      const bytes = def.Version!.responseSerialize(reply);
      const forVersion = built.mock.calls.map((c) => c[0]);
      expect(forVersion).toContain('VersionResponse');
      expect(forVersion).not.toContain('HostnameResponse');
      expect(def.Version!.responseDeserialize(bytes)).toMatchObject({ messages: [{ metadata: { hostname: 'n1' }, version: { tag: 'v1' } }] });
      def.Version!.requestDeserialize(Buffer.alloc(0));
      expect(built).toHaveBeenCalledTimes(forVersion.length);
      def.Hostname!.requestDeserialize(Buffer.alloc(0));
      const forHostname = built.mock.calls.slice(forVersion.length).map((c) => c[0]);
      expect(forHostname).toContain('HostnameResponse');
      // What Version built already (common.Metadata in every reply) is not built again.
      expect(forHostname).not.toContain('Metadata');
      expect(forVersion).toContain('Metadata');
    } finally {
      built.mockRestore();
    }
  });

  it('encode and decode exactly as proto-loader did', async () => {
    const ref = await reference();
    const samples: Array<[string, string, Record<string, unknown>]> = [
      ['machine.MachineService', 'Version', { messages: [{ metadata: { hostname: 'n1' }, version: { tag: 'v1', sha: 'abc', os: 'linux' }, platform: { name: 'metal', mode: 'metal' } }] }],
      ['machine.MachineService', 'ServiceList', { messages: [{ services: [{ id: 'apid', state: 'Running', health: { healthy: true, unknown: false, last_message: '' } }] }] }],
      ['machine.MachineService', 'Memory', { messages: [{ meminfo: { memtotal: '9007199254740993', memfree: '1' } }] }],
      ['cosi.resource.State', 'Get', { resource: { metadata: { namespace: 'runtime', type: 'Services.v1alpha1.talos.dev', id: 'apid', version: '3', phase: 'running' }, spec: { yaml_spec: 'running: true\n' } } }],
    ];
    for (const [svc, method, value] of samples) {
      const ours = serviceDefinition(svc, [method])[method]!;
      expect(serviceDefinition(svc)[method]!.responseSerialize(value), `${svc}/${method} whole service`).toEqual(ours.responseSerialize(value));
      const theirs = (ref[svc] as Record<string, typeof ours>)[method]!;
      const bytes = theirs.responseSerialize(value);
      expect(ours.responseSerialize(value), `${svc}/${method} encode`).toEqual(bytes);
      expect(ours.responseDeserialize(bytes), `${svc}/${method} decode`).toEqual(theirs.responseDeserialize(bytes));
      expect(ours.requestDeserialize(Buffer.alloc(0)), `${svc}/${method} empty request`).toEqual(theirs.requestDeserialize(Buffer.alloc(0)));
    }
  });
});

describe('one message type at a time (messageType)', () => {
  it('is built from the units it needs alone, once, and encodes as the root of every proto does', () => {
    const built = vi.spyOn(lightProtobuf.Type, 'fromJSON');
    try {
      // A spec whose fields hold enums of another unit (talos.resource.definitions.enums).
      const name = 'talos.resource.definitions.network.LinkStatusSpec';
      const t = messageType(name);
      expect(built.mock.calls.map((c) => c[0])).toContain('LinkStatusSpec');
      expect(t.root.lookup('machine.UpgradeRequest')).toBeNull();
      expect(t.root.lookup('talos.resource.definitions.network.AddressStatusSpec')).toBeNull();
      const calls = built.mock.calls.length;
      expect(messageType(name)).toBe(t);
      expect(built).toHaveBeenCalledTimes(calls);
      const full = protoRoot().lookupType(name);
      // Every field whose type lives in another unit resolves.
      const outside = t.fieldsArray.filter((f) => f.resolvedType && !f.resolvedType.fullName.startsWith(`.${name}`));
      expect(outside.length).toBeGreaterThan(0);
      const sample = full.toObject(full.fromObject({}), { defaults: true }) as Record<string, unknown>;
      const value = { ...sample, index: 3, type: 'LINK_ETHER', link_index: 2, hardware_addr: Buffer.from([1, 2, 3, 4, 5, 6]), operational_state: 'OPER_STATE_UP' };
      expect(Buffer.from(t.encode(t.fromObject(value)).finish())).toEqual(Buffer.from(full.encode(full.fromObject(value)).finish()));
    } finally {
      built.mockRestore();
    }
  });

  it('is the same type a method\'s messages use: one root, each type generated once', () => {
    const def = serviceDefinition('cosi.resource.State', ['Get']);
    def.Get!.responseSerialize({ resource: { metadata: { namespace: 'n', type: 't', id: 'i', version: '1', phase: 'running' }, spec: { yaml_spec: 'a: 1\n' } } });
    const metadata = messageType('cosi.resource.Metadata');
    expect(messageType('cosi.resource.Resource').fields.metadata!.resolvedType).toBe(metadata);
    expect(metadata.root).toBe(messageType('talos.resource.definitions.network.LinkStatusSpec').root);
  });

  it('parses the descriptor text of only the units it needs, each once', async () => {
    vi.resetModules();
    const fresh = await import('./protos.ts');
    const { unitText } = await import('bronze:protos');
    const parse = vi.spyOn(JSON, 'parse');
    try {
      fresh.messageType('machine.VersionResponse');
      const parsed = parse.mock.calls.map((c) => c[0]);
      // VersionResponse, Version, common.Metadata, google.rpc.Status, google.protobuf.Any, ...
      expect(parsed.length).toBeGreaterThan(2);
      expect(parsed.length).toBeLessThan(10);
      expect(parsed).toContain(unitText['machine.VersionResponse']);
      expect(parsed).not.toContain(unitText['machine.UpgradeRequest']);
      fresh.messageType('machine.Version');
      expect(parse).toHaveBeenCalledTimes(parsed.length);
    } finally {
      parse.mockRestore();
    }
  });

  it('finds a nested message by its full name, and names an unknown one', () => {
    expect(messageType('cosi.resource.meta.ResourceDefinitionSpec.PrintColumn').fullName).toBe('.cosi.resource.meta.ResourceDefinitionSpec.PrintColumn');
    expect(messageType('cosi.resource.meta.ResourceDefinitionSpec').fullName).toBe('.cosi.resource.meta.ResourceDefinitionSpec');
    expect(() => messageType('no.Such')).toThrow(/no\.Such/);
    expect(() => messageType('machine.NoSuchMessage')).toThrow(/machine\.NoSuchMessage/);
  });
});
