import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { MAINTENANCE_API, maintenanceRefusal } from './maintenance.ts';
import { grpcObject } from './protos.ts';
import { methodsOf } from './rbac.ts';

describe('the maintenance API table', () => {
  it('is exactly what Talos\'s maintenance service serves, of what Bronze has', () => {
    expect(Object.keys(MAINTENANCE_API).sort()).toEqual(
      [
        '/machine.MachineService/ApplyConfiguration',
        '/machine.MachineService/GenerateClientConfiguration',
        '/machine.MachineService/Version',
        '/machine.MachineService/Upgrade',
        '/machine.MachineService/Reset',
        '/cosi.resource.State/Get',
        '/cosi.resource.State/List',
        '/cosi.resource.State/Watch',
        '/cosi.resource.State/Create',
        '/cosi.resource.State/Update',
        '/cosi.resource.State/Destroy',
      ].sort(),
    );
  });

  it('names only RPCs that exist', () => {
    const all = new Set(methodsOf(grpcObject()));
    for (const m of Object.keys(MAINTENANCE_API)) expect(all.has(m), m).toBe(true);
  });

  it('serves a maintenance caller (a reader) apply-config and resource reads, nothing else', () => {
    const served = methodsOf(grpcObject()).filter((m) => maintenanceRefusal(m) === undefined);
    expect(served).toEqual(['/cosi.resource.State/Get', '/cosi.resource.State/List', '/cosi.resource.State/Watch', '/machine.MachineService/ApplyConfiguration']);
  });

  it('answers the rest as Talos does', () => {
    for (const m of ['Memory', 'DiskStats', 'ServiceList', 'Hostname', 'NetworkDeviceStats', 'Reboot', 'Version']) {
      expect(maintenanceRefusal(`/machine.MachineService/${m}`)).toMatchObject({ code: grpc.status.UNIMPLEMENTED, details: expect.stringMatching(/^API is not implemented in maintenance mode/) });
    }
    expect(maintenanceRefusal('/machine.MachineService/GenerateClientConfiguration')).toEqual({
      code: grpc.status.UNIMPLEMENTED,
      details: "client configuration (talosconfig) can't be generated in the maintenance mode",
    });
    expect(maintenanceRefusal('/cosi.resource.State/Update')?.code).toBe(grpc.status.PERMISSION_DENIED);
    // What Talos keeps for SideroLink admins would be theirs.
    expect(maintenanceRefusal('/machine.MachineService/Version', ['os:admin'])).toBeUndefined();
    expect(maintenanceRefusal('/machine.MachineService/Memory', ['os:admin'])?.code).toBe(grpc.status.UNIMPLEMENTED);
  });
});
