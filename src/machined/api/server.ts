// machined's API server: grpc.health.v1.Health, machine.MachineService, inspect.InspectService
// (./inspect.ts) and cosi.resource.State
// on machined's unix socket (<run dir>/machined/machined.sock), which apid routes to.
// Everything it serves is passed in explicitly (ApplyConfiguration and
// GenerateClientConfiguration too). Install, Upgrade, UpgradeStream, Reset and Rollback are
// served by ./lifecycle.ts on top of the Lifecycle machined passes in (none: UNAVAILABLE).
// The read API (Copy, DiskUsage, CPUFreqStats, Netstat, PacketCapture) has a file each;
// Containers, Stats, Restart, containers' Logs and machine.ImageService (./containers.ts,
// ./images.ts) go to the container runtime machined passes in (none yet: UNAVAILABLE). Bootstrap and the Etcd* RPCs are ./etcd.ts, on the etcd service machined passes
// in (none: a node without etcd, which answers as Talos's workers do).
// machined accepts the socket's connections itself and tells its callers apart by their uid
// (SO_PEERCRED): ./callers.ts says what each may call.

import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { serviceDefinition } from '../../contract/protos.ts';
import { socketPath } from '../../contract/paths.ts';
import { versionReply } from '../../daemon/serve.ts';
import { initNative } from '../../lib/native.ts';
import { peerCredentials } from '../../lib/socket-peer.ts';
import { type CallerClass, callerClass, callerInterceptor, offers } from './callers.ts';
import type { DefinitionRegistry } from '../../contract/resources/registry.ts';
import type { State } from '../../state/state.ts';
import { unary, unavailable } from './common.ts';
import { type WorkloadsSource, containersHandlers } from './containers.ts';
import { imageHandlers } from './images.ts';
import { copyHandlers } from './copy.ts';
import { cpuFreqHandlers } from './cpufreq.ts';
import { diskUsageHandlers } from './diskusage.ts';
import { dmesgHandlers } from './dmesg.ts';
import { type EventBus, eventsHandlers } from './events.ts';
import { filesHandlers } from './files.ts';
import { type Lifecycle, lifecycleHandlers } from './lifecycle.ts';
import { type LogSource, type ServiceLogSource, logsHandlers } from './logs.ts';
import { netstatHandlers } from './netstat.ts';
import { pcapHandlers } from './pcap.ts';
import { type PowerCheck, type RequestSequence, powerHandlers } from './power.ts';
import { type EtcdApiDeps, etcdHandlers } from './etcd.ts';
import { inspectHandlers } from './inspect.ts';
import { metaHandlers } from './meta.ts';
import type { ControllerDependencies } from '../../state/controller.ts';
import { resourceHandlers } from './resources.ts';
import { type ServiceControl, serviceHandlers } from './services.ts';
import { sysinfoHandlers } from './sysinfo.ts';

export interface GenerateClientConfigurationRequest {
  roles: string[];
  /** As grpc-js decodes a Duration (seconds as a string); absent when unset. */
  crt_ttl?: { seconds: string | number; nanos: number } | null;
}

export interface GeneratedClientConfiguration {
  ca: Uint8Array;
  crt: Uint8Array;
  key: Uint8Array;
  talosconfig: Uint8Array;
}

export interface MachinedApiDeps {
  supervisor: ServiceControl & ServiceLogSource;
  /** machined's own log (KmsgLogger): served as the logs of id 'machined'. */
  log: LogSource;
  events: EventBus;
  state: State;
  registry: DefinitionRegistry;
  requestSequence: RequestSequence;
  /** Absent until the node has a machine configuration: the RPC then answers UNAVAILABLE.
   *  May throw an ApiError to choose the status (e.g. INVALID_ARGUMENT for unknown roles). */
  generateClientConfiguration?: (req: GenerateClientConfigurationRequest) => Promise<GeneratedClientConfiguration>;
  /** ApplyConfiguration; UNAVAILABLE when absent. */
  applyConfiguration?: (req: any) => Promise<unknown>;
  /** Install, upgrade, reset and rollback (./lifecycle.ts); absent: those RPCs answer UNAVAILABLE. */
  lifecycle?: Lifecycle;
  /** The node's etcd (control planes): Bootstrap and Etcd*; absent: they answer as on a worker. */
  etcd?: EtcdApiDeps;
  /** The controllers machined runs, for inspect.InspectService; absent: none (the daemons' types only). */
  controllers?: () => readonly ControllerDependencies[];
  /** META (MetaWrite, MetaDelete): the partition, or a file in a host run; absent or undefined: FAILED_PRECONDITION. */
  metaDevice?: () => string | undefined;
  /** The container runtime, once containerd is up (undefined before); absent: never. */
  workloads?: WorkloadsSource;
  /** bronze.cluster.Registry (trustd relays workers' Hello to it); absent: not served. */
  clusterRegistry?: grpc.UntypedServiceImplementation;
  /** Checked before a Reboot or Shutdown is accepted (etcd quorum safety); throws an ApiError to refuse. */
  powerCheck?: PowerCheck;
  /** Where failures that no caller sees are reported (e.g. a rejected sequence request). */
  onError?: (msg: string) => void;

  // Host and test knobs.
  /** Default socketPath('machined'). */
  socket?: string;
  /** Default '/proc'. */
  procRoot?: string;
  /** Default '/dev/kmsg'. */
  kmsgPath?: string;
  /** Delay between a Reboot/Shutdown/Reset/Rollback reply (or the end of an install or
   *  upgrade) and the sequence request, ms. Default 100. */
  powerDelayMs?: number;
}

export interface MachinedApi {
  socket: string;
  close(): Promise<void>;
}

export async function startMachinedApi(deps: MachinedApiDeps): Promise<MachinedApi> {
  const socket = deps.socket ?? socketPath('machined');
  // Traversable by the daemons that run under their own users; who may call what is decided
  // per connection by the caller's uid (./callers.ts), so the socket is open to connect to.
  fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o711 });
  fs.chmodSync(path.dirname(socket), 0o711);
  fs.rmSync(socket, { force: true }); // stale from a previous run
  await initNative(); // SO_PEERCRED is read through koffi

  const services: Array<{ name: string; impl: grpc.UntypedServiceImplementation }> = [];
  services.push({
    name: 'grpc.health.v1.Health',
    impl: {
      Check: (_call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => cb(null, { status: 'SERVING' }),
      Watch: (call: grpc.ServerWritableStream<unknown, unknown>) => {
        call.write({ status: 'SERVING' });
      },
    },
  });

  const { metadata: _stamped, ...version } = versionReply().messages[0]!;
  services.push({
    name: 'machine.MachineService',
    impl: {
      Version: unary(() => ({ messages: [version] })),
      ApplyConfiguration: unary(async (req: unknown) => {
        if (!deps.applyConfiguration) throw unavailable('this node does not take configurations');
        return deps.applyConfiguration(req);
      }),
      GenerateClientConfiguration: unary(async (req: GenerateClientConfigurationRequest) => {
        if (!deps.generateClientConfiguration) throw unavailable('no machine configuration yet');
        return { messages: [await deps.generateClientConfiguration(req)] };
      }),
      ...sysinfoHandlers({ procRoot: deps.procRoot }),
      ...serviceHandlers(deps.supervisor, {
        afterReplyMs: deps.powerDelayMs,
        onError: (err) => deps.onError?.(`service request failed: ${err instanceof Error ? err.message : String(err)}`),
      }),
      ...logsHandlers({ supervisor: deps.supervisor, log: deps.log, workloads: deps.workloads }),
      ...dmesgHandlers({ kmsgPath: deps.kmsgPath }),
      ...eventsHandlers(deps.events),
      ...filesHandlers(),
      ...copyHandlers({ warn: (msg) => deps.onError?.(msg) }),
      ...diskUsageHandlers(),
      ...cpuFreqHandlers(),
      ...netstatHandlers({ procRoot: deps.procRoot }),
      ...containersHandlers({ workloads: deps.workloads }),
      ...pcapHandlers(),
      ...etcdHandlers(deps.etcd),
      ...metaHandlers({ metaDevice: () => deps.metaDevice?.() }),
      ...powerHandlers({
        requestSequence: deps.requestSequence,
        check: deps.powerCheck,
        afterReplyMs: deps.powerDelayMs,
        onError: (err) => deps.onError?.(`power request failed: ${err instanceof Error ? err.message : String(err)}`),
      }),
      ...lifecycleHandlers({
        lifecycle: deps.lifecycle,
        afterReplyMs: deps.powerDelayMs,
        onError: (err) => deps.onError?.(`lifecycle request failed: ${err instanceof Error ? err.message : String(err)}`),
      }),
    },
  });
  services.push({ name: 'machine.ImageService', impl: imageHandlers({ workloads: deps.workloads }) });
  services.push({ name: 'inspect.InspectService', impl: inspectHandlers({ controllers: () => deps.controllers?.() ?? [], definitions: () => deps.registry.list() }) });
  services.push({ name: 'cosi.resource.State', impl: resourceHandlers({ state: deps.state, registry: deps.registry }) });
  if (deps.clusterRegistry) services.push({ name: 'bronze.cluster.Registry', impl: deps.clusterRegistry });

  // One grpc-js server per class of caller (made at its first connection), each offering what
  // that class may call; machined accepts the connections itself and hands each to its class's
  // server by the peer's uid (SO_PEERCRED).
  const servers = new Map<CallerClass, { server: grpc.Server; injector: grpc.ConnectionInjector }>();
  const serverFor = (cls: CallerClass) => {
    let s = servers.get(cls);
    if (!s) {
      const server = new grpc.Server(cls === 'local' ? {} : { interceptors: [callerInterceptor(cls)] });
      for (const { name, impl } of services) if (offers(cls, name)) server.addService(serviceDefinition(name), impl);
      s = { server, injector: server.createConnectionInjector(grpc.ServerCredentials.createInsecure()) };
      servers.set(cls, s);
    }
    return s;
  };
  serverFor('local');
  // The accepted connections: close() cuts those still open after a grace period.
  const conns = new Set<net.Socket>();
  const listener = net.createServer((conn) => {
    conns.add(conn);
    conn.once('close', () => conns.delete(conn));
    let cls: CallerClass | undefined;
    let who = 'an unknown peer';
    try {
      const peer = peerCredentials(conn);
      who = `pid ${peer.pid} (uid ${peer.uid})`;
      cls = callerClass(peer.uid);
    } catch (err) {
      who = `a peer whose credentials cannot be read (${(err as Error).message})`;
    }
    if (!cls) {
      deps.onError?.(`machined's socket: refused a connection from ${who}`);
      conn.destroy();
      return;
    }
    serverFor(cls).injector.injectConnection(conn);
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(socket, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  fs.chmodSync(socket, 0o666);

  let closing: Promise<void> | undefined;
  /** Resolves when every accepted connection has closed, or after ms. */
  const connectionsClosed = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      const check = () => {
        if (conns.size > 0) return;
        clearTimeout(timer);
        resolve();
      };
      for (const c of conns) c.once('close', check);
      check();
    });
  return {
    socket,
    close: () =>
      (closing ??= (async () => {
        listener.close();
        const all = [...servers.values()].map((s) => s.server);
        for (const s of all) s.tryShutdown(() => undefined);
        // Streams that follow (logs, events, watches) never end by themselves: give the
        // others a moment, then cut them (grpc-js does not end injected connections' sessions
        // itself, so a `logs -f` would outlive close()).
        await connectionsClosed(1000);
        all.forEach((s) => s.forceShutdown());
        for (const c of conns) c.destroy();
        fs.rmSync(socket, { force: true });
      })()),
  };
}
