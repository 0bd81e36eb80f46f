// trustd: signs certificates for nodes that present the cluster's join token (control-plane
// nodes, :50001). It issues server-auth-only certificates and never a role, whatever the CSR
// asks for. It serves health and Version on its unix socket for machined. The OS CA and the
// token come from machined in <secrets>/trustd/ (ca.crt, ca.key, token); on nodes without
// them (workers) trustd waits, healthy but not listening. It also relays workers' Hello to the
// cluster registry (bronze.cluster.Registry) to machined, which keeps it in etcd: a worker
// describes only itself (its node id is derived from the API certificate it presents), within
// the registry's limits (src/contract/registry-limits.ts), at a bounded rate.
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
import { RegistryRefusal, workerRecord, workerTtlSeconds } from '../contract/registry-limits.ts';
import { ipToBytes } from '../lib/ip.ts';
import { MACHINE_TYPES } from '../contract/resources/member.ts';
import { RateLimiter } from '../lib/rate-limit.ts';
import { IdentityError, workerIdentity } from './worker-identity.ts';
import { listenPeerTls, type PeerTlsListener } from './peer-tls.ts';

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

/**
 * Failed calls (no or a wrong token, a certificate that is not the cluster's, a refused record),
 * counted per peer address: past the burst, that address is refused at once for a while.
 */
export const FAILURE_LIMIT = { burst: 10, refillMs: 6_000 };
/** Hellos per caller (per certificate key): a node says Hello every 10 s. */
export const HELLO_LIMIT = { burst: 5, refillMs: 2_000 };
/** The largest request trustd reads (a CSR is about 1 KiB; a registry record at most 2 KiB). */
export const MAX_REQUEST_BYTES = 64 * 1024;

/** The address of a peer as call.getPeer() prints it ("10.0.0.2:4321", "::1:4321"). */
export function peerAddress(peer: string): string {
  const i = peer.lastIndexOf(':');
  return i > 0 && /^\d+$/.test(peer.slice(i + 1)) ? peer.slice(0, i) : peer;
}

/**
 * How a handler refuses its caller, counting a failure against the caller's address; undefined
 * (the call already answered RESOURCE_EXHAUSTED) when that address failed too often.
 */
function failureGuard(failures: RateLimiter, peer: string, cb: grpc.sendUnaryData<unknown>): ((code: grpc.status, details: string) => void) | undefined {
  const addr = peerAddress(peer);
  if (!failures.allows(addr)) {
    const s = Math.ceil(failures.retryAfterMs(addr) / 1000);
    cb({ code: grpc.status.RESOURCE_EXHAUSTED, details: `too many failed calls from ${addr}; retry in ${s} s` });
    return undefined;
  }
  return (code, details) => {
    failures.charge(addr);
    cb({ code, details });
  };
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
export function securityService(
  secrets: () => TrustdSecrets | undefined,
  log: Logger,
  ttlMs = CERT_TTL_MS,
  failures = new RateLimiter(FAILURE_LIMIT),
): grpc.UntypedServiceImplementation {
  return {
    Certificate: (call: grpc.ServerUnaryCall<{ csr: Buffer }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      const fail = failureGuard(failures, call.getPeer(), cb);
      if (!fail) return;
      const s = secrets();
      if (!s) return cb({ code: grpc.status.UNAVAILABLE, details: 'trustd has no CA yet' });
      const token = String(call.metadata.get('token')[0] ?? '');
      if (!token) return fail(grpc.status.UNAUTHENTICATED, 'the join token is required (metadata "token")');
      if (!tokenMatches(token, s.token)) return fail(grpc.status.PERMISSION_DENIED, 'the join token is not valid');
      const csr = Buffer.from(call.request.csr ?? []).toString('utf8');
      loadCerts().then(
        ({ signCSR }) =>
          signCSR(s.ca, csr, { ttlMs, serverAuthOnly: true }).then(
            (crt) => {
              log.info(`signed a certificate for ${call.getPeer()}`);
              cb(null, { ca: Buffer.from(s.ca.crt), crt: Buffer.from(crt) });
            },
            (err: Error) => fail(grpc.status.INVALID_ARGUMENT, `bad certificate signing request: ${err.message}`),
          ),
        (err: Error) => cb({ code: grpc.status.INTERNAL, details: `trustd cannot load its certificate code: ${err.message}` }),
      );
    },
  };
}

export interface RegistryServiceOptions {
  /** The DER certificate the caller of `call.getPeer()` presented (peer-tls.ts). */
  peerCertificate: (peer: string) => Buffer | undefined;
  /** Shared with Certificate: failed calls per peer address. */
  failures?: RateLimiter;
}

/**
 * bronze.cluster.Registry for nodes without etcd (workers): Hello, authenticated by the join
 * token as Certificate is and by the API certificate trustd issued the caller (its TLS client
 * certificate), relayed to this node's machined, which keeps the registry in etcd. The record
 * relayed is the caller's: its node id derived from the certificate, a worker, within the limits.
 */
export function registryService(secrets: () => TrustdSecrets | undefined, machinedSocket: string, log: Logger, o: RegistryServiceOptions): grpc.UntypedServiceImplementation {
  const Registry = serviceClient('bronze.cluster.Registry');
  const failures = o.failures ?? new RateLimiter(FAILURE_LIMIT);
  const hellos = new RateLimiter(HELLO_LIMIT);
  let client: (grpc.Client & { Hello(req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: grpc.requestCallback<unknown>): void }) | undefined;
  return {
    Hello: (call: grpc.ServerUnaryCall<{ member?: unknown; ttl_seconds?: unknown }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      const fail = failureGuard(failures, call.getPeer(), cb);
      if (!fail) return;
      const s = secrets();
      if (!s) return cb({ code: grpc.status.UNAVAILABLE, details: 'trustd has no join token yet' });
      const token = String(call.metadata.get('token')[0] ?? '');
      if (!token) return fail(grpc.status.UNAUTHENTICATED, 'the join token is required (metadata "token")');
      if (!tokenMatches(token, s.token)) return fail(grpc.status.PERMISSION_DENIED, 'the join token is not valid');
      let id;
      try {
        id = workerIdentity(o.peerCertificate(call.getPeer()), s.ca.crt);
      } catch (err) {
        return fail(grpc.status.UNAUTHENTICATED, err instanceof IdentityError ? err.message : `client certificate: ${(err as Error).message}`);
      }
      let request: object;
      try {
        const ttl = workerTtlSeconds(call.request.ttl_seconds);
        const r = workerRecord(call.request.member, id.nodeId);
        // Rebuilt from the checked record: nothing of the request travels further unchecked.
        request = { member: { node_id: r.nodeId, addresses: r.addresses.map((a) => ({ ip: ipToBytes(a) })), hostname: r.hostname, machine_type: MACHINE_TYPES.worker, operating_system: r.operatingSystem }, ttl_seconds: ttl };
      } catch (err) {
        if (!(err instanceof RegistryRefusal)) return cb({ code: grpc.status.INTERNAL, details: `registry Hello: ${(err as Error).message}` });
        return fail(err.kind === 'denied' ? grpc.status.PERMISSION_DENIED : grpc.status.INVALID_ARGUMENT, err.message);
      }
      // Valid requests count against the caller's certificate; invalid ones against its address (above).
      if (!hellos.take(id.keyHash)) {
        const secs = Math.ceil(hellos.retryAfterMs(id.keyHash) / 1000);
        return cb({ code: grpc.status.RESOURCE_EXHAUSTED, details: `Hello from ${id.nodeId}: at most ${HELLO_LIMIT.burst} calls at once and one every ${HELLO_LIMIT.refillMs / 1000} s; retry in ${secs} s` });
      }
      client ??= new Registry(`unix:${machinedSocket}`, grpc.credentials.createInsecure()) as unknown as typeof client;
      client!.Hello(request, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (err, res) => {
        if (err) {
          log.warn(`registry Hello from ${call.getPeer()} (${id.nodeId}): ${err.details || err.message}`);
          return cb({ code: err.code, details: err.details || err.message });
        }
        // machined answers without node ids; never pass one on.
        const members = ((res as { members?: Array<Record<string, unknown>> } | undefined)?.members ?? []).map(({ node_id: _drop, ...m }) => m);
        cb(null, { members });
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
  let listener: PeerTlsListener | undefined;
  const stop = async (sig: string) => {
    log.info(`${sig}: stopping`);
    local.setStatus('NOT_SERVING');
    await Promise.all([local.close(), listener?.close(), server ? shutdownServer(server) : undefined]);
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

  // trustd serves with the node's API server certificate (renewed in place, like apid's). It
  // asks for a client certificate without requiring one: Certificate's callers have none yet;
  // Hello's present their API certificate, checked by the handler (peer-tls.ts says why).
  const certs = new ApidCertificateSource(path.join(secretsDir(), 'apid'), log);
  certs.start();
  await certs.ready();
  server = new grpc.Server({ 'grpc.max_receive_message_length': MAX_REQUEST_BYTES });
  const failures = new RateLimiter(FAILURE_LIMIT);
  const listen = process.env.BRONZE_TRUSTD_LISTEN ?? '[::]:50001';
  server.addService(serviceDefinition('securityapi.SecurityService'), securityService(() => secrets, log, CERT_TTL_MS, failures));
  server.addService(serviceDefinition('bronze.cluster.Registry'), registryService(() => secrets, socketPath('machined'), log, { peerCertificate: (peer) => listener?.peerCertificate(peer), failures }));
  listener = await listenPeerTls(server, certs, listen, log);
  log.info(`signing certificates on ${listen}`);
}
