// Who may call what: one table, as data, from every RPC's full method path to how its caller
// is authorized. apid checks it for every call (the roles come from the client certificate's
// Organization). The rules follow Talos's machined authorization table: admin can do
// everything; operator can also reboot, shut down and control services; reader gets the
// read-only calls that reveal no secrets; etcd:backup gets etcd snapshots only.
//
// Two kinds of method are not role-checked at all:
// - `token`: trustd's Certificate, authenticated by the cluster's join token (the caller has
//   no client certificate yet), on trustd's own port;
// - `local`: served only on the daemons' unix sockets for machined's supervisor; apid never
//   routes them;
// - `etcd`: etcd's own API (protos/etcd), which Bronze only calls, as a client of the etcd it
//   supervises, with certificates from the etcd CA; no Bronze process serves it.
// allowed() grants none of these kinds to any role.

/** gRPC metadata key in which apid passes the caller's roles to the daemons it forwards to (one value per role). */
export const ROLE_METADATA_KEY = 'bronze-role';
//
// COSI State access is per method here; which resource types a reader may see (e.g. no
// secrets) is the state service's own check, as in Talos.
import type * as grpc from '@grpc/grpc-js';

import { API_ROLES, type ApiRole } from './api-roles.ts';

export { API_ROLES, type ApiRole };

export type Rule =
  | { readonly auth: 'roles'; readonly roles: readonly ApiRole[] }
  | { readonly auth: 'token' }
  | { readonly auth: 'local' }
  | { readonly auth: 'etcd' };

const admin: Rule = { auth: 'roles', roles: ['os:admin'] };
const operator: Rule = { auth: 'roles', roles: ['os:admin', 'os:operator'] };
const reader: Rule = { auth: 'roles', roles: ['os:admin', 'os:operator', 'os:reader'] };
const etcdBackup: Rule = { auth: 'roles', roles: ['os:admin', 'os:operator', 'os:etcd:backup'] };
const token: Rule = { auth: 'token' };
const local: Rule = { auth: 'local' };
const etcdApi: Rule = { auth: 'etcd' };
// Talos's rules for the etcd RPCs: reading the membership and status is open to readers and to
// the backup role; changing the membership is admin only; maintenance (alarms, defrag) operator.
const etcdReader: Rule = { auth: 'roles', roles: ['os:admin', 'os:operator', 'os:reader', 'os:etcd:backup'] };

/** Every RPC in protos/, by full method path. A test fails when one is missing or extra. */
export const RBAC: Readonly<Record<string, Rule>> = Object.freeze({
  // Configuration and credentials.
  '/machine.MachineService/ApplyConfiguration': admin,
  '/machine.MachineService/GenerateClientConfiguration': admin,

  // Observation: reader.
  '/machine.MachineService/CPUInfo': reader,
  '/machine.MachineService/CPUFreqStats': reader,
  '/machine.MachineService/Containers': reader,
  '/machine.MachineService/DiskStats': reader,
  '/machine.MachineService/DiskUsage': reader,
  '/machine.MachineService/Dmesg': reader,
  '/machine.MachineService/Events': reader,
  '/machine.MachineService/Hostname': reader,
  '/machine.MachineService/List': reader,
  '/machine.MachineService/LoadAvg': reader,
  '/machine.MachineService/Logs': reader,
  '/machine.MachineService/Memory': reader,
  '/machine.MachineService/Mounts': reader,
  '/machine.MachineService/Netstat': reader,
  '/machine.MachineService/NetworkDeviceStats': reader,
  '/machine.MachineService/Processes': reader,
  '/machine.MachineService/ServiceList': reader,
  '/machine.MachineService/Stats': reader,
  '/machine.MachineService/SystemStat': reader,
  '/machine.MachineService/Version': reader,

  // Reading file contents can reveal keys and the machine config: admin only.
  '/machine.MachineService/Read': admin,
  '/machine.MachineService/Copy': admin,

  // Packet capture sees the node's traffic: operator (as Talos).
  '/machine.MachineService/PacketCapture': operator,

  // Running what is already set up: operator.
  '/machine.MachineService/Reboot': operator,
  '/machine.MachineService/Shutdown': operator,
  '/machine.MachineService/ServiceRestart': operator,
  '/machine.MachineService/ServiceStart': operator,
  '/machine.MachineService/ServiceStop': operator,
  // A container's restart is a new instance of what is already declared (Talos: operator).
  '/machine.MachineService/Restart': operator,

  // Changing or destroying what the node runs: admin.
  '/machine.MachineService/Reset': admin,
  '/machine.MachineService/Rollback': admin,
  '/machine.MachineService/Upgrade': admin,
  '/machine.MachineService/UpgradeStream': admin,
  '/machine.MachineService/Install': admin,
  '/machine.MachineService/Repair': admin,
  // META survives reinstalls and resets: writing or deleting a key is admin only (as Talos).
  '/machine.MachineService/MetaWrite': admin,
  '/machine.MachineService/MetaDelete': admin,

  // An etcd snapshot holds every cluster secret; it has its own role.
  '/machine.MachineService/EtcdSnapshot': etcdBackup,

  // The cluster's etcd (Talos's table).
  '/machine.MachineService/Bootstrap': admin,
  '/machine.MachineService/EtcdMemberList': etcdReader,
  '/machine.MachineService/EtcdStatus': etcdReader,
  '/machine.MachineService/EtcdAlarmList': etcdReader,
  '/machine.MachineService/EtcdAlarmDisarm': operator,
  '/machine.MachineService/EtcdDefragment': operator,
  '/machine.MachineService/EtcdForfeitLeadership': admin,
  '/machine.MachineService/EtcdLeaveCluster': admin,
  '/machine.MachineService/EtcdRemoveMemberByID': admin,
  '/machine.MachineService/EtcdRecover': admin,

  // Images in the node's containerd (Talos's table): listing and verifying are reads, pulling
  // fetches what the registry config already allows (operator), importing an archive brings
  // in an image from anywhere and removing one can stop containers from starting (admin).
  // Talos also grants Verify to its os:image-verifier role, which Bronze does not have.
  '/machine.ImageService/List': reader,
  '/machine.ImageService/Verify': reader,
  '/machine.ImageService/Pull': operator,
  '/machine.ImageService/Import': admin,
  '/machine.ImageService/Remove': admin,

  // The controller/daemon -> resource graph: names of types, no values (Talos: reader).
  '/inspect.InspectService/ControllerRuntimeDependencies': reader,

  '/time.TimeService/Time': reader,
  '/time.TimeService/TimeCheck': reader,

  '/cosi.resource.State/Get': reader,
  '/cosi.resource.State/List': reader,
  '/cosi.resource.State/Watch': reader,
  '/cosi.resource.State/Create': admin,
  '/cosi.resource.State/Update': admin,
  '/cosi.resource.State/Destroy': admin,

  '/securityapi.SecurityService/Certificate': token,
  // Bronze's cluster registry on trustd: workers publish themselves with the join token.
  '/bronze.cluster.Registry/Hello': token,

  '/etcdserverpb.KV/Range': etcdApi,
  '/etcdserverpb.KV/Put': etcdApi,
  '/etcdserverpb.KV/DeleteRange': etcdApi,
  '/etcdserverpb.Lease/LeaseGrant': etcdApi,
  '/etcdserverpb.Lease/LeaseRevoke': etcdApi,
  '/etcdserverpb.Lease/LeaseKeepAlive': etcdApi,
  '/etcdserverpb.Cluster/MemberAdd': etcdApi,
  '/etcdserverpb.Cluster/MemberRemove': etcdApi,
  '/etcdserverpb.Cluster/MemberList': etcdApi,
  '/etcdserverpb.Cluster/MemberPromote': etcdApi,
  '/etcdserverpb.Maintenance/Alarm': etcdApi,
  '/etcdserverpb.Maintenance/Status': etcdApi,
  '/etcdserverpb.Maintenance/Defragment': etcdApi,
  '/etcdserverpb.Maintenance/Snapshot': etcdApi,
  '/etcdserverpb.Maintenance/MoveLeader': etcdApi,

  '/grpc.health.v1.Health/Check': local,
  '/grpc.health.v1.Health/Watch': local,
});

/**
 * Whether a caller holding `roles` may call `method` (a full path such as
 * `/machine.MachineService/Reboot`). Unknown methods, unknown roles, and methods that are not
 * role-checked (`token`, `local`) are all denied.
 */
export function allowed(method: string, roles: readonly string[]): boolean {
  if (!Object.hasOwn(RBAC, method)) return false;
  const rule = RBAC[method]!;
  if (rule.auth !== 'roles') return false;
  return roles.some((r) => (rule.roles as readonly string[]).includes(r));
}

/** Every full method path (`/package.Service/Method`) of the services in a loaded gRPC object, sorted. */
export function methodsOf(obj: grpc.GrpcObject): string[] {
  const out: string[] = [];
  const walk = (node: grpc.GrpcObject) => {
    for (const value of Object.values(node)) {
      if (typeof value === 'function' && 'service' in value) {
        for (const m of Object.values((value as grpc.ServiceClientConstructor).service)) out.push(m.path);
      } else if (value && typeof value === 'object' && !('format' in value)) {
        // A package namespace; message and enum definitions (which have `format`) are skipped.
        walk(value as grpc.GrpcObject);
      }
    }
  };
  walk(obj);
  return out.sort();
}
