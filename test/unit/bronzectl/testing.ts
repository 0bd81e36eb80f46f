// A stand-in apid for bronzectl's tests: a real grpc-js server on 127.0.0.1 with real mTLS
// (certificates from src/pki), serving only the RPCs a test hands it and recording every call's
// path, request and routing metadata. Plus a runner for the CLI in-process.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { newClientConfig, save } from '../../../src/contract/clientconfig.ts';
import { serviceDefinition } from '../../../src/contract/protos.ts';
import { newCA, type CertAndKey } from '../../../src/pki/ca.ts';
import { issueServerCert } from '../../../src/pki/certs.ts';
import { run } from '../../../src/bronzectl/cli.ts';

const DAY = 86_400_000;

export interface Pki {
  ca: CertAndKey;
  /** serverAuth, SANs 127.0.0.1 and localhost. */
  server: CertAndKey;
}

export async function makePki(): Promise<Pki> {
  const ca = await newCA({ commonName: 'bronze', organization: 'bronze', validityDays: 1 });
  const server = await issueServerCert(ca, { commonName: 'apid', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], ttlMs: DAY });
  return { ca, server };
}

/* eslint-disable @typescript-eslint/no-explicit-any */
export type UnaryHandler = (req: any, md: grpc.Metadata) => unknown;
export type StreamHandler = (req: any, call: grpc.ServerWritableStream<any, any>) => void | Promise<void>;
/** A bidirectional stream: the handler reads and writes the call itself (recorded without a request). */
export type BidiHandler = (call: grpc.ServerDuplexStream<any, any>) => void | Promise<void>;
export type Handler = { unary: UnaryHandler } | { stream: StreamHandler } | { bidi: BidiHandler };

export interface RecordedCall {
  path: string;
  request: any;
  node: string[];
  /** As apid reads it: HTTP/2 joins repeated header values with ", ", so they are split again. */
  nodes: string[];
}

export interface FakeApi {
  port: number;
  endpoint: string;
  calls: RecordedCall[];
  close(): Promise<void>;
}

const SERVICES = ['machine.MachineService', 'time.TimeService', 'cosi.resource.State'];

export async function startApi(
  pki: Pki,
  handlers: Record<string, Handler>,
  opts: { requireClientCert?: boolean; cert?: CertAndKey; port?: number } = {},
): Promise<FakeApi> {
  const calls: RecordedCall[] = [];
  const server = new grpc.Server();
  for (const svc of SERVICES) {
    const def = serviceDefinition(svc);
    const impl: grpc.UntypedServiceImplementation = {};
    for (const [name, m] of Object.entries(def)) {
      const h = handlers[m.path];
      if (!h) continue;
      const record = (call: { request: any; metadata: grpc.Metadata }) =>
        calls.push({ path: m.path, request: call.request, node: call.metadata.get('node').map(String), nodes: call.metadata.get('nodes').flatMap((v) => String(v).split(',')).map((v) => v.trim()).filter(Boolean) });
      if ('unary' in h) {
        impl[name] = (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
          record(call);
          Promise.resolve()
            .then(() => h.unary(call.request, call.metadata))
            .then(
              (reply) => cb(null, reply),
              (err: Error & { code?: number }) => cb({ code: err.code ?? grpc.status.UNKNOWN, details: err.message }),
            );
        };
      } else if ('bidi' in h) {
        impl[name] = (call: grpc.ServerDuplexStream<any, any>) => {
          record({ request: undefined, metadata: call.metadata });
          Promise.resolve()
            .then(() => h.bidi(call))
            .then(
              () => {
                if (!call.cancelled && !call.writableEnded) call.end();
              },
              (err: Error & { code?: number }) => call.emit('error', { code: err.code ?? grpc.status.UNKNOWN, details: err.message }),
            );
        };
      } else {
        impl[name] = (call: grpc.ServerWritableStream<any, any>) => {
          record(call);
          Promise.resolve()
            .then(() => h.stream(call.request, call))
            .then(
              () => {
                if (!call.cancelled && !call.writableEnded) call.end();
              },
              (err: Error & { code?: number }) => call.emit('error', { code: err.code ?? grpc.status.UNKNOWN, details: err.message }),
            );
        };
      }
    }
    server.addService(def, impl);
  }
  const cert = opts.cert ?? pki.server;
  const creds = grpc.ServerCredentials.createSsl(
    opts.requireClientCert === false ? null : Buffer.from(pki.ca.crt),
    [{ private_key: Buffer.from(cert.key), cert_chain: Buffer.from(cert.crt) }],
    opts.requireClientCert !== false,
  );
  const port = await new Promise<number>((resolve, reject) => server.bindAsync(`127.0.0.1:${opts.port ?? 0}`, creds, (err, p) => (err ? reject(err) : resolve(p))));
  return {
    port,
    endpoint: `127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}

/** A gRPC error for a handler to throw. */
export function grpcError(code: grpc.status, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code });
}

/** A 127.0.0.1 port with nothing listening on it. */
export async function deadEndpoint(): Promise<string> {
  const net = await import('node:net');
  const port = await new Promise<number>((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
  return `127.0.0.1:${port}`;
}

export interface Workspace {
  dir: string;
  config: string;
  cleanup(): Promise<void>;
}

/** A temporary directory holding an admin client config (context "test") for `endpoints`. */
export async function workspace(pki: Pki, endpoints: string[], opts: { nodes?: string[]; roles?: string[] } = {}): Promise<Workspace> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bronzectl-test-'));
  const config = path.join(dir, 'config');
  const cfg = await newClientConfig({ contextName: 'test', endpoints, nodes: opts.nodes ?? [], ca: pki.ca, roles: opts.roles ?? ['os:admin'], ttlMs: DAY });
  await save(config, cfg);
  return { dir, config, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export interface CliResult {
  code: number;
  out: string;
  err: string;
  /** stdout as raw bytes (for `read`). */
  raw: Buffer;
}

/**
 * Runs bronzectl in-process against the workspace's config (first endpoint tried first).
 * `interruptWhen`: a Ctrl-C (the signal aborted) once stdout so far satisfies it, as a user
 * who waits for the lines they expect (10 s at most).
 */
export async function cli(ws: Workspace, argv: string[], opts: { signal?: AbortSignal; env?: Record<string, string>; interruptWhen?: (out: string) => boolean } = {}): Promise<CliResult> {
  const out: Buffer[] = [];
  const err: string[] = [];
  let signal = opts.signal;
  let interrupt: (() => void) | undefined;
  let deadline: ReturnType<typeof setTimeout> | undefined;
  if (opts.interruptWhen) {
    const ac = new AbortController();
    signal = ac.signal;
    interrupt = () => ac.abort();
    deadline = setTimeout(interrupt, 10_000);
  }
  const code = await run(argv, {
    stdout: {
      write: (c: string | Uint8Array) => {
        out.push(Buffer.from(c));
        if (interrupt && opts.interruptWhen!(Buffer.concat(out).toString())) setImmediate(interrupt);
      },
    },
    stderr: { write: (c: string | Uint8Array) => err.push(Buffer.from(c).toString()) },
    env: { HOME: ws.dir, BRONZECONFIG: ws.config, ...opts.env },
    cwd: ws.dir,
    random: () => 0,
    ...(signal ? { signal } : {}),
  });
  clearTimeout(deadline);
  const raw = Buffer.concat(out);
  return { code, out: raw.toString(), err: err.join(''), raw };
}

/** A reply envelope item's metadata, as apid stamps it. */
export function md(hostname: string, error?: string) {
  return { hostname, ...(error ? { error } : {}) };
}
