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

/** Roles of a verified caller, or an error to return. `cert` is undefined when TLS did not verify one. */
export function callerRoles(cert: PeerCertificate | undefined, md: grpc.Metadata): string[] | AuthError {
  if (!cert) {
    return {
      code: grpc.status.UNAUTHENTICATED,
      details: 'a client certificate signed by this cluster\'s OS CA is required (none was presented, or it was not signed by the OS CA)',
    };
  }
  const roles = organizations(cert);
  if (roles.includes(IMPERSONATOR_ROLE)) {
    const relayed = md
      .get(ROLES_METADATA)
      .flatMap((v) => String(v).split(','))
      .map((r) => r.trim())
      .filter((r) => (ROLES as readonly string[]).includes(r));
    return relayed;
  }
  return roles;
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
