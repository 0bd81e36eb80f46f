// Maintenance mode: a node without a machine configuration. apid then serves with a
// self-signed certificate, asks for no client certificate, routes to no other node, and takes
// every caller as os:reader, as Talos's apid does in maintenance mode: the reader API answers,
// apply-config is open to anyone, the rest is refused (the table is src/contract/maintenance.ts).
// machined marks the mode with a file beside apid's certificates and removes it once a valid
// configuration is applied.
import { MAINTENANCE_CALLER_ROLES, maintenanceRefusal } from '../contract/maintenance.ts';
import type { AuthError } from './authz.ts';

export { MAINTENANCE_MARKER } from '../contract/maintenance.ts';

/** The role apid vouches for towards machined for a maintenance-mode caller. */
export const MAINTENANCE_ROLE = MAINTENANCE_CALLER_ROLES[0]!;

export function maintenanceAuthorize(method: string): AuthError | undefined {
  return maintenanceRefusal(method, MAINTENANCE_CALLER_ROLES);
}
