// Who may call machined on its unix socket, told apart by the connecting process's uid
// (SO_PEERCRED, lib/socket-peer.ts), not by what a call's metadata says:
//
//  - root, or machined's own uid (host runs): machined's root daemons (networkd, udevd) and
//    host tests; everything, as before;
//  - apid's uid: every service, but each call must carry the roles apid vouches for (the
//    `bronze-role` metadata, checked per call as before: read-only resources, no secrets to a
//    non-admin); only the health check (apid's connection warm-up) goes without;
//  - trustd's uid: the cluster registry's Hello, which it relays for joining nodes, only;
//  - timed's uid: the health check and the resource state, writing only as `timed`;
//  - anyone else: the connection is closed.
import * as grpc from '@grpc/grpc-js';
import { ROLE_METADATA_KEY } from '../../contract/rbac.ts';
import { OWNER_METADATA_KEY } from '../../contract/resources/registry.ts';
import { DAEMON_USERS } from '../../lib/daemon-users.ts';

export type CallerClass = 'local' | 'apid' | 'trustd' | 'timed';

export interface CallerPolicy {
  /** Services this class's server offers ('*': all of machined's). */
  services: '*' | readonly string[];
  /** Full method paths allowed; absent: every method of its services. */
  methods?: readonly string[];
  /** Calls must carry role metadata, except these methods. */
  rolesRequired?: { except: readonly string[] };
  /** Role metadata is refused (a daemon is not an API client). */
  noRoles?: boolean;
  /** Writes (the owner metadata) may only name this owner. */
  owner?: string;
}

const HEALTH = 'grpc.health.v1.Health';

export const CALLER_POLICIES: Readonly<Record<CallerClass, CallerPolicy>> = Object.freeze({
  local: { services: '*' },
  apid: { services: '*', rolesRequired: { except: [`/${HEALTH}/Check`, `/${HEALTH}/Watch`] } },
  trustd: { services: ['bronze.cluster.Registry'], methods: ['/bronze.cluster.Registry/Hello'], noRoles: true },
  timed: { services: [HEALTH, 'cosi.resource.State'], noRoles: true, owner: 'timed' },
});

/** The class of a connection from `uid`; undefined: refused. */
export function callerClass(uid: number, ownUid = process.getuid?.() ?? 0): CallerClass | undefined {
  if (uid === 0 || uid === ownUid) return 'local';
  if (uid === DAEMON_USERS.apid.uid) return 'apid';
  if (uid === DAEMON_USERS.trustd.uid) return 'trustd';
  if (uid === DAEMON_USERS.timed.uid) return 'timed';
  return undefined;
}

/** Why a call of `path` with `md` is refused for `cls`, or undefined. */
export function refusal(cls: CallerClass, path: string, md: grpc.Metadata): { code: grpc.status; details: string } | undefined {
  const p = CALLER_POLICIES[cls];
  if (p.methods && !p.methods.includes(path)) return { code: grpc.status.PERMISSION_DENIED, details: `${path} is not open to ${cls} on machined's socket` };
  const roles = md.get(ROLE_METADATA_KEY).flatMap((v) => String(v).split(',')).map((r) => r.trim()).filter(Boolean);
  if (p.rolesRequired && !p.rolesRequired.except.includes(path) && roles.length === 0) {
    return { code: grpc.status.UNAUTHENTICATED, details: `${path}: calls from ${cls} must name the caller's roles (metadata ${ROLE_METADATA_KEY})` };
  }
  if (p.noRoles && md.get(ROLE_METADATA_KEY).length > 0) return { code: grpc.status.PERMISSION_DENIED, details: `${cls} may not name roles (metadata ${ROLE_METADATA_KEY})` };
  if (p.owner !== undefined) {
    const owners = md.get(OWNER_METADATA_KEY).map(String);
    if (owners.some((o) => o !== p.owner)) return { code: grpc.status.PERMISSION_DENIED, details: `${cls} may write only as ${p.owner}, not as ${owners.join(', ')}` };
  }
  return undefined;
}

/** A grpc-js server interceptor that refuses, before the handler runs, what `cls` may not call. */
export function callerInterceptor(cls: CallerClass): grpc.ServerInterceptor {
  return (method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (md, mdNext) => {
            const why = refusal(cls, method.path, md);
            if (why) call.sendStatus({ ...why, metadata: new grpc.Metadata() });
            else mdNext(md);
          },
        }),
    });
}

/** Whether `cls`'s server offers `service`. */
export function offers(cls: CallerClass, service: string): boolean {
  const s = CALLER_POLICIES[cls].services;
  return s === '*' || s.includes(service);
}
