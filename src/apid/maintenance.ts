// Maintenance mode: a node without a machine configuration. apid then serves with a
// self-signed certificate, asks for no client certificate, and lets through only what an
// operator needs to give the node its configuration: ApplyConfiguration and read-only calls
// that reveal no secrets (as Talos's maintenance service). machined marks the mode with a
// file beside apid's certificates and removes it once a valid configuration is applied.
import * as grpc from '@grpc/grpc-js';
import type { AuthError } from './authz.ts';

export const MAINTENANCE_MARKER = 'maintenance';

/** Calls served in maintenance mode, as data. */
export const MAINTENANCE_ALLOWED: ReadonlySet<string> = new Set([
  '/machine.MachineService/ApplyConfiguration',
  '/machine.MachineService/Version',
  '/machine.MachineService/Hostname',
  '/machine.MachineService/Memory',
  '/machine.MachineService/ServiceList',
  '/machine.MachineService/DiskStats',
  '/machine.MachineService/NetworkDeviceStats',
  '/cosi.resource.State/Get',
  '/cosi.resource.State/List',
  '/cosi.resource.State/Watch',
]);

/** The role apid vouches for towards machined for a maintenance-mode caller. */
export const MAINTENANCE_ROLE = 'os:reader';

export function maintenanceAuthorize(method: string): AuthError | undefined {
  if (MAINTENANCE_ALLOWED.has(method)) return undefined;
  return {
    code: grpc.status.FAILED_PRECONDITION,
    details: `${method} is not available in maintenance mode: the node has no configuration yet; apply one first (bronzectl apply-config --insecure)`,
  };
}
