// What a node in maintenance mode (no machine configuration yet) serves on its insecure API:
// exactly what Talos's maintenance service serves (internal/app/maintenance), no more, as
// data. Talos injects the os:reader role into every caller of that service, and os:admin only
// into SideroLink peers; Bronze has no SideroLink, so its maintenance callers are readers, and
// what Talos keeps for admins answers them as Talos answers a reader: UNIMPLEMENTED.
//
// Talos's maintenance MachineService implements ApplyConfiguration (anyone),
// GenerateClientConfiguration (always UNIMPLEMENTED), Version, Upgrade, Reset, MetaWrite and
// MetaDelete (admin only) and GenerateConfiguration; it also serves COSI State, filtered to
// what a reader may see (so writes are denied), and StorageService.Disks. Of these, Bronze has
// no GenerateConfiguration, Meta* or StorageService RPCs. Every other method of a served
// service answers UNIMPLEMENTED.
import * as grpc from '@grpc/grpc-js';

export type MaintenanceRule =
  /** Served to any caller of the maintenance API. */
  | { readonly serve: 'anyone' }
  /** Talos: SideroLink peers only (os:admin). Bronze's maintenance callers never hold it. */
  | { readonly serve: 'admin' }
  /** Answered with this status, as Talos's maintenance service answers it. */
  | { readonly refuse: grpc.status; readonly message: string };

const anyone: MaintenanceRule = { serve: 'anyone' };
const admin: MaintenanceRule = { serve: 'admin' };

export const NOT_IN_MAINTENANCE = 'API is not implemented in maintenance mode';

export const MAINTENANCE_API: Readonly<Record<string, MaintenanceRule>> = Object.freeze({
  '/machine.MachineService/ApplyConfiguration': anyone,
  '/machine.MachineService/GenerateClientConfiguration': {
    refuse: grpc.status.UNIMPLEMENTED,
    message: "client configuration (talosconfig) can't be generated in the maintenance mode",
  },
  '/machine.MachineService/Version': admin,
  '/machine.MachineService/Upgrade': admin,
  '/machine.MachineService/Reset': admin,
  '/cosi.resource.State/Get': anyone,
  '/cosi.resource.State/List': anyone,
  '/cosi.resource.State/Watch': anyone,
  '/cosi.resource.State/Create': { refuse: grpc.status.PERMISSION_DENIED, message: 'resources are read-only in maintenance mode' },
  '/cosi.resource.State/Update': { refuse: grpc.status.PERMISSION_DENIED, message: 'resources are read-only in maintenance mode' },
  '/cosi.resource.State/Destroy': { refuse: grpc.status.PERMISSION_DENIED, message: 'resources are read-only in maintenance mode' },
});

/** The role a maintenance caller has (Talos's ReadOnly injection). */
export const MAINTENANCE_CALLER_ROLES: readonly string[] = ['os:reader'];

/**
 * How the maintenance API answers `method` for a caller with `roles`: undefined to serve it,
 * else the status and message to refuse it with.
 */
export function maintenanceRefusal(method: string, roles: readonly string[] = MAINTENANCE_CALLER_ROLES): { code: grpc.status; details: string } | undefined {
  const rule = Object.hasOwn(MAINTENANCE_API, method) ? MAINTENANCE_API[method]! : undefined;
  if (rule && 'serve' in rule && (rule.serve === 'anyone' || roles.includes('os:admin'))) return undefined;
  if (rule && 'refuse' in rule) return { code: rule.refuse, details: rule.message };
  return {
    code: grpc.status.UNIMPLEMENTED,
    details: `${NOT_IN_MAINTENANCE}: ${method} is not served until the node has a configuration (bronzectl apply-config --insecure)`,
  };
}

/**
 * What a node in maintenance mode shows a client: the common name of its throwaway self-signed
 * certificate, which machined makes (src/machined/node-config.ts); bronzectl recognises it when
 * its mTLS handshake fails, to say "the node is in maintenance mode: use --insecure".
 */
export const MAINTENANCE_CA_COMMON_NAME = 'bronze maintenance';

/** The file in apid's secrets directory whose presence puts apid in maintenance mode (machined writes it, with the reasons). */
export const MAINTENANCE_MARKER = 'maintenance';
