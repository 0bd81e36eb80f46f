// trustd: signs certificates for nodes that present the cluster's join token (control-plane
// nodes, :50001). It issues server-auth-only certificates and never a role, whatever the CSR
// asks for. It serves health and Version on its unix socket for machined. The OS CA and the
// token come from machined in <secrets>/trustd/ (ca.crt, ca.key, token); on nodes without
// them (workers) trustd waits, healthy but not listening.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { serviceDefinition } from '../contract/protos.ts';
import { serveDaemon, shutdownServer } from '../daemon/serve.ts';
import { StderrLogger, type Logger } from '../lib/log.ts';
import { signCSR } from '../pki/certs.ts';
import { ApidCertificateSource } from '../daemon/certs.ts';
import { secretsDir } from '../contract/paths.ts';

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
      signCSR(s.ca, csr, { ttlMs, serverAuthOnly: true }).then(
        (crt) => {
          log.info(`signed a certificate for ${call.getPeer()}`);
          cb(null, { ca: Buffer.from(s.ca.crt), crt: Buffer.from(crt) });
        },
        (err: Error) => cb({ code: grpc.status.INVALID_ARGUMENT, details: `bad certificate signing request: ${err.message}` }),
      );
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
  const listen = process.env.BRONZE_TRUSTD_LISTEN ?? '[::]:50001';
  await new Promise<number>((resolve, reject) => server!.bindAsync(listen, creds, (err, port) => (err ? reject(err) : resolve(port))));
  log.info(`signing certificates on ${listen}`);
}
