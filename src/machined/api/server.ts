// machined's API server: grpc.health.v1.Health, machine.MachineService and cosi.resource.State
// on machined's unix socket (<run dir>/machined/machined.sock), which apid routes to.
// Everything it serves is passed in explicitly (ApplyConfiguration and
// GenerateClientConfiguration too). Install, Upgrade, UpgradeStream, Reset and Rollback are
// served by ./lifecycle.ts on top of the Lifecycle machined passes in (none: UNAVAILABLE).
// The read API (Copy, DiskUsage, CPUFreqStats, Netstat, PacketCapture, Containers, Stats) has
// a file each. EtcdSnapshot is not built yet and answers UNIMPLEMENTED.

import fs from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { serviceDefinition } from '../../contract/protos.ts';
import { socketPath } from '../../contract/paths.ts';
import { versionReply } from '../../daemon/serve.ts';
import type { DefinitionRegistry } from '../../contract/resources/registry.ts';
import type { State } from '../../state/state.ts';
import { unary, unavailable } from './common.ts';
import { containersHandlers } from './containers.ts';
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
import { type RequestSequence, powerHandlers } from './power.ts';
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
  fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 });
  fs.rmSync(socket, { force: true }); // stale from a previous run

  const server = new grpc.Server();
  server.addService(serviceDefinition('grpc.health.v1.Health'), {
    Check: (_call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => cb(null, { status: 'SERVING' }),
    Watch: (call: grpc.ServerWritableStream<unknown, unknown>) => {
      call.write({ status: 'SERVING' });
    },
  });

  const { metadata: _stamped, ...version } = versionReply().messages[0]!;
  server.addService(serviceDefinition('machine.MachineService'), {
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
    ...logsHandlers({ supervisor: deps.supervisor, log: deps.log }),
    ...dmesgHandlers({ kmsgPath: deps.kmsgPath }),
    ...eventsHandlers(deps.events),
    ...filesHandlers(),
    ...copyHandlers({ warn: (msg) => deps.onError?.(msg) }),
    ...diskUsageHandlers(),
    ...cpuFreqHandlers(),
    ...netstatHandlers({ procRoot: deps.procRoot }),
    ...containersHandlers(),
    ...pcapHandlers(),
    ...powerHandlers({
      requestSequence: deps.requestSequence,
      afterReplyMs: deps.powerDelayMs,
      onError: (err) => deps.onError?.(`power request failed: ${err instanceof Error ? err.message : String(err)}`),
    }),
    ...lifecycleHandlers({
      lifecycle: deps.lifecycle,
      afterReplyMs: deps.powerDelayMs,
      onError: (err) => deps.onError?.(`lifecycle request failed: ${err instanceof Error ? err.message : String(err)}`),
    }),
  });
  server.addService(serviceDefinition('cosi.resource.State'), resourceHandlers({ state: deps.state, registry: deps.registry }));

  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  fs.chmodSync(socket, 0o600);

  let closing: Promise<void> | undefined;
  return {
    socket,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        // Streams that follow (logs, events, watches) never end by themselves: give the
        // others a moment, then cut them.
        const timer = setTimeout(() => server.forceShutdown(), 1000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          fs.rmSync(socket, { force: true });
          resolve();
        });
      })),
  };
}
