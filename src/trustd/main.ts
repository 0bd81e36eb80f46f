// trustd: signs certificates for nodes that present the cluster's join token (control-plane
// nodes, :50001). It issues server-auth-only certificates and never a role, whatever the CSR
// asks for. It serves health and Version on its unix socket for machined. The OS CA and the
// token come from machined in <secrets>/trustd/ (ca.crt, ca.key, token); on nodes without
// them (workers) trustd waits, healthy but not listening. It also relays workers' Hello to the
// cluster registry (bronze.cluster.Registry) to machined, which keeps it in etcd.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { serviceClient, serviceDefinition } from '../contract/protos.ts';
import { serveDaemon, shutdownServer } from '../daemon/serve.ts';
import { StderrLogger, type Logger } from '../lib/log.ts';
import { ApidCertificateSource } from '../daemon/certs.ts';
import { secretsDir, socketPath } from '../contract/paths.ts';

export const CERT_TTL_MS = 24 * 3600 * 1000;

export interface TrustdSecrets {
  ca: { crt: string; key: string };
  token: string;
}

export function readTrustdSecrets(dir: string): TrustdSecrets | undefined {
  try {
    const r = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
    return { ca: { crt: r('ca.crt'), key: r('ca.key') }, token: r('token').trim() };
  } catch {
    return undefined;
  }
}

function tokenMatches(given: string, want: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(want);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/**
 * The certificate code, loaded at the first CSR: every node starts trustd at boot, but only a
 * control plane that another node joins ever signs, and @peculiar/x509 with its ASN.1 schemas
 * was a quarter of loading trustd's bundle (on the host, code cache on, 3 interleaved runs:
 * 52-79 ms before, 40-48 ms after; under TCG that is ~0.5-1.5 s of a boot's CPU).
 */
const loadCerts = () => import('../pki/certs.ts');

/** The securityapi.SecurityService implementation over the given secrets. */
export function securityService(secrets: () => TrustdSecrets | undefined, log: Logger, ttlMs = CERT_TTL_MS): grpc.UntypedServiceImplementation {
  return {
    Certificate: (call: grpc.ServerUnaryCall<{ csr: Buffer }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      const s = secrets();
      if (!s) return cb({ code: grpc.status.UNAVAILABLE, details: 'trustd has no CA yet' });
      const token = String(call.metadata.get('token')[0] ?? '');
      if (!token) return cb({ code: grpc.status.UNAUTHENTICATED, details: 'the join token is required (metadata "token")' });
      if (!tokenMatches(token, s.token)) return cb({ code: grpc.status.PERMISSION_DENIED, details: 'the join token is not valid' });
      const csr = Buffer.from(call.request.csr ?? []).toString('utf8');
      loadCerts().then(
        ({ signCSR }) =>
          signCSR(s.ca, csr, { ttlMs, serverAuthOnly: true }).then(
            (crt) => {
              log.info(`signed a certificate for ${call.getPeer()}`);
              cb(null, { ca: Buffer.from(s.ca.crt), crt: Buffer.from(crt) });
            },
            (err: Error) => cb({ code: grpc.status.INVALID_ARGUMENT, details: `bad certificate signing request: ${err.message}` }),
          ),
        (err: Error) => cb({ code: grpc.status.INTERNAL, details: `trustd cannot load its certificate code: ${err.message}` }),
      );
    },
  };
}

/**
 * bronze.cluster.Registry for nodes without etcd (workers): Hello, authenticated by the join
 * token as Certificate is, relayed to this node's machined, which keeps the registry in etcd.
 */
export function registryService(secrets: () => TrustdSecrets | undefined, machinedSocket: string, log: Logger): grpc.UntypedServiceImplementation {
  const Registry = serviceClient('bronze.cluster.Registry');
  let client: (grpc.Client & { Hello(req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: grpc.requestCallback<unknown>): void }) | undefined;
  return {
    Hello: (call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      const s = secrets();
      if (!s) return cb({ code: grpc.status.UNAVAILABLE, details: 'trustd has no join token yet' });
      const token = String(call.metadata.get('token')[0] ?? '');
      if (!token) return cb({ code: grpc.status.UNAUTHENTICATED, details: 'the join token is required (metadata "token")' });
      if (!tokenMatches(token, s.token)) return cb({ code: grpc.status.PERMISSION_DENIED, details: 'the join token is not valid' });
      client ??= new Registry(`unix:${machinedSocket}`, grpc.credentials.createInsecure()) as unknown as typeof client;
      client!.Hello(call.request, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (err, res) => {
        if (err) {
          log.warn(`registry Hello from ${call.getPeer()}: ${err.details || err.message}`);
          return cb({ code: err.code, details: err.details || err.message });
        }
        cb(null, res);
      });
    },
  };
}

export async function main(): Promise<void> {
  tls.DEFAULT_MIN_VERSION = 'TLSv1.3';
  const log = new StderrLogger('trustd');
  const local = await serveDaemon('trustd', log);
  const dir = path.join(secretsDir(), 'trustd');
  let secrets = readTrustdSecrets(dir);
  let server: grpc.Server | undefined;
  const stop = async (sig: string) => {
    log.info(`${sig}: stopping`);
    local.setStatus('NOT_SERVING');
    await Promise.all([local.close(), server ? shutdownServer(server) : undefined]);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  if (!secrets) log.info(`no CA in ${dir}: not a control-plane node (yet); waiting`);
  while (!secrets) {
    await new Promise((r) => setTimeout(r, 1000));
    secrets = readTrustdSecrets(dir);
  }
  // Pick up a rotated token or CA without a restart.
  setInterval(() => (secrets = readTrustdSecrets(dir) ?? secrets), 5000).unref();

  // trustd serves with the node's API server certificate (renewed in place, like apid's);
  // callers have no client certificate yet, so none is requested.
  const certs = new ApidCertificateSource(path.join(secretsDir(), 'apid'), log);
  certs.start();
  await certs.ready();
  const creds = grpc.experimental.createCertificateProviderServerCredentials(certs, null, false);
  server = new grpc.Server();
  server.addService(serviceDefinition('securityapi.SecurityService'), securityService(() => secrets, log));
  server.addService(serviceDefinition('bronze.cluster.Registry'), registryService(() => secrets, socketPath('machined'), log));
  const listen = process.env.BRONZE_TRUSTD_LISTEN ?? '[::]:50001';
  await new Promise<number>((resolve, reject) => server!.bindAsync(listen, creds, (err, port) => (err ? reject(err) : resolve(port))));
  log.info(`signing certificates on ${listen}`);
}
