// Who is calling and may they: the caller's roles come from its client certificate's
// Organization (verified against the OS CA by TLS); a peer apid relaying a call presents the
// `os:impersonator` role and passes the original caller's roles in metadata. The RBAC table
// (src/contract/rbac.ts) decides.
import * as grpc from '@grpc/grpc-js';
import type { PeerCertificate } from 'node:tls';
import { RBAC, API_ROLES, ROLE_METADATA_KEY, allowed } from '../contract/rbac.ts';

export const IMPERSONATOR_ROLE = 'os:impersonator';
/** The caller's roles, set by apid on every call it forwards (to a peer apid or a local daemon). */
export const ROLES_METADATA = ROLE_METADATA_KEY;

export interface AuthError {
  code: grpc.status;
  details: string;
}

function organizations(cert: PeerCertificate): string[] {
  const o = (cert.subject as unknown as Record<string, string | string[] | undefined>)?.O;
  if (o === undefined) return [];
  return Array.isArray(o) ? o : [o];
}

const NO_CERTIFICATE: AuthError = {
  code: grpc.status.UNAUTHENTICATED,
  details: 'a client certificate signed by this cluster\'s OS CA is required (none was presented, or it was not signed by the OS CA)',
};

const RENEW =
  'get a new one: `bronzectl config new` with a client config that still works, or a new bronzeconfig from the cluster\'s secrets (`bronzectl gen config <name> <endpoint> --with-secrets secrets.yaml`); `bronzectl config info` shows the dates';

/** What apid can see of a connection's TLS client certificate and its verification. */
export interface PeerTls {
  /** Node's reason the certificate failed verification (an Error with a code, or a string). */
  authorizationError?: unknown;
  getPeerCertificate(): PeerCertificate | Record<string, never>;
}

const iso = (d: string) => {
  const t = new Date(d);
  return Number.isNaN(t.getTime()) ? d : t.toISOString().replace('.000Z', 'Z');
};

/**
 * Why a connection's client certificate gives no roles, said so the caller knows what to do:
 * none presented, expired or not yet valid (with the dates and this node's clock), or issued by
 * another CA. `socket` undefined: grpc-js did not show the connection (the generic message).
 */
export function explainUnverified(socket: PeerTls | undefined, now = new Date()): AuthError {
  if (!socket) return NO_CERTIFICATE;
  const err = socket.authorizationError;
  const code = typeof err === 'string' ? err : ((err as { code?: string } | undefined)?.code ?? (err as Error | undefined)?.message);
  let cert: Partial<PeerCertificate> = {};
  try {
    cert = socket.getPeerCertificate();
  } catch {
    /* a socket gone meanwhile */
  }
  const details = (text: string): AuthError => ({ code: grpc.status.UNAUTHENTICATED, details: text });
  if (!cert || !cert.raw) {
    return details(
      'no client certificate was presented: this API needs one signed by the cluster\'s OS CA (the bronzeconfig written by `bronzectl gen config`); a node in maintenance mode takes --insecure instead',
    );
  }
  const who = `your client certificate (${cert.subject?.CN ? `CN ${String(cert.subject.CN)}, ` : ''}valid ${iso(cert.valid_from ?? '?')} to ${iso(cert.valid_to ?? '?')})`;
  const clock = `this node's clock says ${now.toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
  if (code === 'CERT_HAS_EXPIRED') return details(`${who} has expired (${clock}): ${RENEW}`);
  if (code === 'CERT_NOT_YET_VALID') return details(`${who} is not valid yet (${clock}; check the clocks, \`bronzectl time\`)`);
  if (code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' || code === 'UNABLE_TO_GET_ISSUER_CERT' || code === 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY' || code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || code === 'SELF_SIGNED_CERT_IN_CHAIN' || code === 'CERT_SIGNATURE_FAILURE') {
    const issuer = cert.issuer?.CN ?? cert.issuer?.O;
    return details(`${who} is issued by ${issuer ? `"${String(issuer)}"` : 'another CA'}, not by this cluster's OS CA: your client config is for another cluster (check --context, --bronzeconfig, $BRONZECONFIG)`);
  }
  return details(`${who} was not accepted (${code ?? 'not verified'}): it must be signed by this cluster's OS CA and valid now (${clock})`);
}

/** The roles a verified client certificate carries (its Organizations); undefined when TLS verified none. */
export function certificateRoles(cert: PeerCertificate | undefined): readonly string[] | undefined {
  return cert ? organizations(cert) : undefined;
}

/**
 * The caller's roles from its certificate's roles (`certificateRoles`): those roles, or, for a
 * peer apid relaying a call (`os:impersonator`), the known roles it passes in metadata.
 */
export function rolesOf(certRoles: readonly string[] | undefined, md: grpc.Metadata, unverified: () => AuthError = () => NO_CERTIFICATE): readonly string[] | AuthError {
  if (!certRoles) return unverified();
  if (certRoles.includes(IMPERSONATOR_ROLE)) {
    return md
      .get(ROLES_METADATA)
      .flatMap((v) => String(v).split(','))
      .map((r) => r.trim())
      .filter((r) => (API_ROLES as readonly string[]).includes(r));
  }
  return certRoles;
}

/** Roles of a verified caller, or an error to return. `cert` is undefined when TLS did not verify one. */
export function callerRoles(cert: PeerCertificate | undefined, md: grpc.Metadata): readonly string[] | AuthError {
  return rolesOf(certificateRoles(cert), md);
}

/** What apid reads of a call to authenticate it: its metadata and its TLS peer. */
export type AuthenticatedCall = Pick<grpc.ServerUnaryCall<unknown, unknown>, 'metadata' | 'getAuthContext'>;

/**
 * The roles of each TLS connection's client certificate, read once per connection. A
 * connection's client certificate and its verification are fixed by its handshake (TLS 1.3
 * has no renegotiation) and every call on it arrives on the one HTTP/2 session of that
 * connection: so the certificate is read on a connection's first call (grpc-js's
 * getAuthContext builds Node's whole peer-certificate object, the largest part of apid's
 * per-call work) and its roles kept, keyed by that session object itself (never by an
 * address, which a later connection may reuse), and dropped with it. Metadata-relayed roles
 * (`os:impersonator`) are per call and never cached. When grpc-js does not show the session
 * (`sessionOf`), every call reads its certificate, as before.
 */
export class ConnectionRoles {
  private readonly byConnection = new WeakMap<object, { roles: readonly string[] | undefined; why?: AuthError }>();
  /** Certificates read (for the tests: one per connection). */
  reads = 0;

  rolesOf(call: AuthenticatedCall): readonly string[] | AuthError {
    const session = sessionOf(call);
    let entry = session ? this.byConnection.get(session) : undefined;
    if (!entry) {
      this.reads++;
      const certRoles = certificateRoles(call.getAuthContext()?.sslPeerCertificate);
      entry = certRoles ? { roles: Object.freeze([...certRoles]) } : { roles: undefined, why: explainUnverified((session as { socket?: PeerTls } | undefined)?.socket) };
      if (session) this.byConnection.set(session, entry);
    }
    const why = entry.why;
    return rolesOf(entry.roles, call.metadata, () => why ?? NO_CERTIFICATE);
  }
}

/**
 * The HTTP/2 session (one client connection) a grpc-js server call arrived on: grpc-js keeps
 * it at `call.call.stream.session` (the handler's call object wraps the server's own call,
 * which holds the HTTP/2 stream). Not public API: anything else there gives undefined, and
 * then nothing is cached (src/apid/authz.test.ts checks this path is the one taken).
 */
export function sessionOf(call: object): object | undefined {
  const session = (call as { call?: { stream?: { session?: unknown } } }).call?.stream?.session;
  return typeof session === 'object' && session !== null && 'socket' in session ? session : undefined;
}

export function authorize(method: string, roles: readonly string[]): AuthError | undefined {
  const rule = RBAC[method];
  if (!rule) return { code: grpc.status.UNIMPLEMENTED, details: `unknown method ${method}` };
  if (rule.auth !== 'roles') return { code: grpc.status.PERMISSION_DENIED, details: `${method} is not served by apid` };
  if (!allowed(method, roles)) {
    const who = roles.length ? `roles ${roles.join(', ')}` : 'no role';
    return { code: grpc.status.PERMISSION_DENIED, details: `${method} requires one of ${rule.roles.join(', ')}; the caller has ${who}` };
  }
  return undefined;
}
