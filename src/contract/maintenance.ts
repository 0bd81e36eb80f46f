// What a node in maintenance mode (no machine configuration yet) serves on its insecure API, as
// data.
//
// What Talos does today (since "feat: unify maintenance and regular APIs", v1.13): there is no
// separate maintenance service any more. apid serves the node's whole API in maintenance mode,
// without client certificates (skip_verifying_client_cert), without routing to other nodes
// (node_routing_disabled) and in "read-only role mode": every caller is given os:reader, and
// os:admin only a SideroLink peer (authz.ReadOnlyWithAdminOnSiderolink). machined's one rules
// table then decides, as for any reader: the reader API answers (Version, Dmesg, Logs, Memory,
// resource reads, ... — Talos's integration test maintenance_basic calls Version on every
// maintenance node), the rest is PermissionDenied ("not authorized": Reboot, Upgrade, Reset,
// LifecycleService/Install, GenerateClientConfiguration, ...), and resource types whose
// definition is sensitive (the machine config, secrets, LinkSpec, ...) are PermissionDenied to
// a reader by the COSI access policy, as outside maintenance. A few methods are open to
// os:reader in machined's rules "for maintenance only, verified in the handler": the handler
// refuses a non-admin once the node is configured. Those are ApplyConfiguration,
// StorageService/BlockDeviceWipe (`talosctl wipe disk`), LVMService's removals and
// MDService/Destroy. Upgrade and Reset have maintenance paths in their handlers, but the rules
// keep them for os:admin, so only SideroLink peers (Omni) reach them.
//
// Bronze does the same with its own tables: a maintenance caller is os:reader, and what it may
// call is what src/contract/rbac.ts gives os:reader, with the exceptions below. Where Bronze
// differs: it has no SideroLink, so no maintenance caller ever holds os:admin and Upgrade and
// Reset are always refused (Talos refuses them to every caller but a SideroLink peer); it has
// no StorageService, LVMService or MDService yet, so of Talos's maintenance-only methods only
// ApplyConfiguration is here (TALOS_MAINTENANCE_ONLY lists the rest; a test fails when one of
// them exists in protos/ but not in this table); the refusals say why, in Bronze's words,
// where Talos says "not authorized". Which resource types are sensitive (MachineConfigs and
// Bronze's ParsedMachineConfigs: what Talos marks sensitive of the types Bronze has) is the
// resource definitions' (src/contract/resources/), checked by machined's state service for
// every caller that apid names (src/machined/api/resources.ts), in maintenance or not.
import * as grpc from '@grpc/grpc-js';
import { RBAC, allowed } from './rbac.ts';

export type MaintenanceRule =
  /** Served to any caller of the maintenance API (Talos: os:reader "for maintenance only"). */
  | { readonly serve: 'anyone' }
  /** Talos: os:admin only, which in maintenance mode only SideroLink peers hold. Bronze's maintenance callers never do. */
  | { readonly serve: 'admin' }
  /** Answered with this status and message. */
  | { readonly refuse: grpc.status; readonly message: string };

const anyone: MaintenanceRule = { serve: 'anyone' };
const admin: MaintenanceRule = { serve: 'admin' };
const readOnly: MaintenanceRule = { refuse: grpc.status.PERMISSION_DENIED, message: 'resources are read-only in maintenance mode' };

/** The role every maintenance caller has (Talos's read-only role mode). */
export const MAINTENANCE_CALLER_ROLES: readonly string[] = ['os:reader'];

/**
 * The methods Talos's machined rules open to os:reader "for maintenance only, verified in the
 * handler" (internal/app/machined/pkg/system/services/machined.go). Each that Bronze has is in
 * MAINTENANCE_API as `anyone`.
 */
export const TALOS_MAINTENANCE_ONLY: readonly string[] = [
  '/machine.MachineService/ApplyConfiguration',
  '/storage.StorageService/BlockDeviceWipe',
  '/machine.LVMService/LogicalVolumeRemove',
  '/machine.LVMService/VolumeGroupRemove',
  '/machine.LVMService/PhysicalVolumeRemove',
  '/machine.MDService/Destroy',
];

/**
 * The exceptions to "what os:reader may call" in maintenance mode. Every other method is
 * answered as rbac.ts answers the maintenance caller's roles.
 */
export const MAINTENANCE_API: Readonly<Record<string, MaintenanceRule>> = Object.freeze({
  // The way out of maintenance mode: open to anyone until the node has a configuration.
  '/machine.MachineService/ApplyConfiguration': anyone,
  // Talos's handlers take these in maintenance mode, for os:admin (SideroLink) only.
  '/machine.MachineService/Upgrade': admin,
  '/machine.MachineService/Reset': admin,
  // No OS CA to sign with yet.
  '/machine.MachineService/GenerateClientConfiguration': {
    refuse: grpc.status.PERMISSION_DENIED,
    message: "client configuration (bronzeconfig) can't be generated in maintenance mode: the node has no OS CA until it is configured",
  },
  // Talos's COSI access policy: "write access is not allowed".
  '/cosi.resource.State/Create': readOnly,
  '/cosi.resource.State/Update': readOnly,
  '/cosi.resource.State/Destroy': readOnly,
});

const APPLY_FIRST = 'apply a configuration first (bronzectl apply-config --insecure), then call it with your client configuration';

/**
 * How the maintenance API answers `method` for a caller with `roles`: undefined to serve it,
 * else the status and message to refuse it with.
 */
export function maintenanceRefusal(method: string, roles: readonly string[] = MAINTENANCE_CALLER_ROLES): { code: grpc.status; details: string } | undefined {
  const rule = Object.hasOwn(MAINTENANCE_API, method) ? MAINTENANCE_API[method]! : undefined;
  if (rule && 'refuse' in rule) return { code: rule.refuse, details: rule.message };
  if (rule?.serve === 'anyone') return undefined;
  if (rule?.serve === 'admin') {
    if (roles.includes('os:admin')) return undefined;
    return { code: grpc.status.PERMISSION_DENIED, details: `${method} requires os:admin, and in maintenance mode every caller is os:reader: ${APPLY_FIRST}` };
  }
  if (!Object.hasOwn(RBAC, method)) return { code: grpc.status.UNIMPLEMENTED, details: `unknown method ${method}` };
  const r = RBAC[method]!;
  if (r.auth !== 'roles') return { code: grpc.status.PERMISSION_DENIED, details: `${method} is not served by apid` };
  if (allowed(method, roles)) return undefined;
  const needs = r.roles.length === 1 ? r.roles[0]! : `one of ${r.roles.join(', ')}`;
  return { code: grpc.status.PERMISSION_DENIED, details: `${method} requires ${needs}, and in maintenance mode every caller is os:reader: ${APPLY_FIRST}` };
}

/**
 * What a node in maintenance mode shows a client: the common name of its throwaway self-signed
 * certificate, which machined makes (src/machined/node-config.ts); bronzectl recognises it when
 * its mTLS handshake fails, to say "the node is in maintenance mode: use --insecure".
 */
export const MAINTENANCE_CA_COMMON_NAME = 'bronze maintenance';

/** The file in apid's secrets directory whose presence puts apid in maintenance mode (machined writes it, with the reasons). */
export const MAINTENANCE_MARKER = 'maintenance';
