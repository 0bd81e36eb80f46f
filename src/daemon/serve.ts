// What every Bronze daemon serves on its unix socket: the standard gRPC health service and
// the machine Version RPC. A daemon adds its own services through `extra`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { serviceDefinition } from '../contract/protos.ts';
import { socketPath } from '../contract/paths.ts';
import { VERSION } from '../version.ts';
import type { Logger } from '../lib/log.ts';
import { startupTimes } from '../lib/startup.ts';
import { notifyReady } from '../lib/ready.ts';

export type ServingStatus = 'SERVING' | 'NOT_SERVING';

export interface DaemonServer {
  server: grpc.Server;
  socket: string;
  setStatus(status: ServingStatus): void;
  close(): Promise<void>;
}

export function versionReply() {
  return {
    messages: [
      {
        metadata: { hostname: os.hostname() },
        version: { tag: VERSION.tag, sha: VERSION.sha, built: VERSION.built, go_version: process.version, os: 'linux', arch: process.arch === 'x64' ? 'amd64' : process.arch },
        platform: { name: 'metal', mode: 'metal' },
        features: { rbac: true },
      },
    ],
  };
}

export async function serveDaemon(
  name: string,
  log: Logger,
  extra: Array<{ service: string; impl: grpc.UntypedServiceImplementation }> = [],
): Promise<DaemonServer> {
  const socket = socketPath(name);
  fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 });
  fs.rmSync(socket, { force: true }); // a stale socket from a previous run of this daemon
  let status: ServingStatus = 'SERVING';
  // No channelz: nothing reads it, and its bookkeeping is work on every call.
  const server = new grpc.Server({ 'grpc.enable_channelz': 0 });
  server.addService(serviceDefinition('grpc.health.v1.Health'), {
    Check: (_call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => cb(null, { status }),
    Watch: (call: grpc.ServerWritableStream<unknown, unknown>) => {
      call.write({ status });
    },
  });
  server.addService(serviceDefinition('machine.MachineService', ['Version']), {
    Version: (_call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => cb(null, versionReply()),
  });
  for (const { service, impl } of extra) server.addService(serviceDefinition(service), impl);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  // Its owner and the directory's group may connect: a daemon under its own user has a
  // directory of group apid, made by machined (lib/daemon-users.ts), so apid reaches it.
  fs.chmodSync(socket, 0o660);
  log.info(`serving on ${socket} (${startupTimes()})`);
  // Health says SERVING from here on: tell the supervisor, if it asked (lib/ready.ts).
  notifyReady();
  return {
    server,
    socket,
    setStatus: (s) => {
      status = s;
    },
    close: () => shutdownServer(server),
  };
}

/** Lets calls in flight finish for up to `graceMs`, then closes whatever is left. */
export function shutdownServer(server: grpc.Server, graceMs = 2000): Promise<void> {
  return new Promise<void>((resolve) => {
    server.tryShutdown(() => resolve());
    setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs).unref();
  });
}

/** Runs a daemon until SIGTERM/SIGINT, then shuts its server down and exits 0. */
export async function runDaemon(name: string, log: Logger, start: () => Promise<DaemonServer>): Promise<void> {
  const d = await start();
  let stopping = false;
  const stop = async (sig: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${sig}: stopping`);
    d.setStatus('NOT_SERVING');
    await d.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
