// Who is calling and may they: the caller's roles come from its client certificate's
// Organization (verified against the OS CA by TLS); a peer apid relaying a call presents the
// `os:impersonator` role and passes the original caller's roles in metadata. The RBAC table
// (src/contract/rbac.ts) decides.
import * as grpc from '@grpc/grpc-js';
import type { PeerCertificate } from 'node:tls';
import { RBAC, ROLES, allowed } from '../contract/rbac.ts';

export const IMPERSONATOR_ROLE = 'os:impersonator';
/** The caller's roles, set by apid on every call it forwards (to a peer apid or a local daemon). */
export const ROLES_METADATA = 'bronze-role';

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

/** The roles a verified client certificate carries (its Organizations); undefined when TLS verified none. */
export function certificateRoles(cert: PeerCertificate | undefined): readonly string[] | undefined {
  return cert ? organizations(cert) : undefined;
}

/**
 * The caller's roles from its certificate's roles (`certificateRoles`): those roles, or, for a
 * peer apid relaying a call (`os:impersonator`), the known roles it passes in metadata.
 */
export function rolesOf(certRoles: readonly string[] | undefined, md: grpc.Metadata): readonly string[] | AuthError {
  if (!certRoles) return NO_CERTIFICATE;
  if (certRoles.includes(IMPERSONATOR_ROLE)) {
    return md
      .get(ROLES_METADATA)
      .flatMap((v) => String(v).split(','))
      .map((r) => r.trim())
      .filter((r) => (ROLES as readonly string[]).includes(r));
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
  private readonly byConnection = new WeakMap<object, readonly string[] | undefined>();
  /** Certificates read (for the tests: one per connection). */
  reads = 0;

  rolesOf(call: AuthenticatedCall): readonly string[] | AuthError {
    const session = sessionOf(call);
    let certRoles: readonly string[] | undefined;
    if (session && this.byConnection.has(session)) {
      certRoles = this.byConnection.get(session);
    } else {
      this.reads++;
      certRoles = certificateRoles(call.getAuthContext()?.sslPeerCertificate);
      if (session) this.byConnection.set(session, certRoles ? Object.freeze([...certRoles]) : undefined);
    }
    return rolesOf(certRoles, call.metadata);
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
