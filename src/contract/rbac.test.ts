import { describe, expect, it } from 'vitest';
import { grpcObject } from './protos.ts';
import { RBAC, API_ROLES, allowed, methodsOf } from './rbac.ts';

const methods = methodsOf(grpcObject());

describe('RBAC table', () => {
  it('lists every RPC of the loaded protos', () => {
    expect(methods).toContain('/machine.MachineService/Version');
    expect(methods).toContain('/cosi.resource.State/Watch');
    expect(methods).toContain('/securityapi.SecurityService/Certificate');
    expect(methods).toContain('/grpc.health.v1.Health/Check');
    expect(new Set(methods).size).toBe(methods.length);
    expect(methods).toEqual([...methods].sort());
  });

  it('has a rule for every RPC in the protos', () => {
    const missing = methods.filter((m) => !Object.hasOwn(RBAC, m));
    expect(missing, 'RPCs without an RBAC rule').toEqual([]);
  });

  it('has no rule for a method that does not exist', () => {
    const known = new Set(methods);
    const stale = Object.keys(RBAC).filter((m) => !known.has(m));
    expect(stale, 'RBAC rules naming no RPC').toEqual([]);
  });

  it('names only known roles, and always includes admin in role rules', () => {
    for (const [method, rule] of Object.entries(RBAC)) {
      if (rule.auth !== 'roles') continue;
      expect(rule.roles.length, method).toBeGreaterThan(0);
      for (const r of rule.roles) expect(API_ROLES, method).toContain(r);
      expect(rule.roles, method).toContain('os:admin');
    }
  });

  it('authenticates trustd by token and keeps health checks local, outside role checks', () => {
    expect(RBAC['/securityapi.SecurityService/Certificate']).toEqual({ auth: 'token' });
    expect(RBAC['/grpc.health.v1.Health/Check']).toEqual({ auth: 'local' });
    expect(RBAC['/grpc.health.v1.Health/Watch']).toEqual({ auth: 'local' });
    const notRoles = Object.entries(RBAC).filter(([, r]) => r.auth !== 'roles').map(([m]) => m);
    const etcd = notRoles.filter((m) => m.startsWith('/etcdserverpb.'));
    for (const m of etcd) expect(RBAC[m], m).toEqual({ auth: 'etcd' });
    expect(etcd.length).toBe(15);
    expect(notRoles.filter((m) => !m.startsWith('/etcdserverpb.')).sort()).toEqual([
      '/bronze.cluster.Registry/Hello',
      '/grpc.health.v1.Health/Check',
      '/grpc.health.v1.Health/Watch',
      '/securityapi.SecurityService/Certificate',
    ]);
    expect(RBAC['/bronze.cluster.Registry/Hello']).toEqual({ auth: 'token' });
    for (const m of notRoles) expect(allowed(m, API_ROLES), m).toBe(false);
  });
});

describe('allowed', () => {
  const roleMethods = methods.filter((m) => RBAC[m]?.auth === 'roles');
  const grantedTo = (role: string) => roleMethods.filter((m) => allowed(m, [role]));

  it('admin can call every role-checked RPC', () => {
    expect(grantedTo('os:admin')).toEqual(roleMethods);
  });

  it('reader cannot reboot, operator and admin can', () => {
    expect(allowed('/machine.MachineService/Reboot', ['os:reader'])).toBe(false);
    expect(allowed('/machine.MachineService/Reboot', ['os:operator'])).toBe(true);
    expect(allowed('/machine.MachineService/Reboot', ['os:admin'])).toBe(true);
  });

  it('reader gets exactly the read-only calls that reveal no secrets', () => {
    expect(grantedTo('os:reader')).toEqual(
      [
        '/cosi.resource.State/Get',
        '/cosi.resource.State/List',
        '/cosi.resource.State/Watch',
        '/inspect.InspectService/ControllerRuntimeDependencies',
        '/machine.ImageService/List',
        '/machine.ImageService/Verify',
        '/machine.MachineService/CPUFreqStats',
        '/machine.MachineService/CPUInfo',
        '/machine.MachineService/Containers',
        '/machine.MachineService/DiskStats',
        '/machine.MachineService/DiskUsage',
        '/machine.MachineService/EtcdAlarmList',
        '/machine.MachineService/EtcdMemberList',
        '/machine.MachineService/EtcdStatus',
        '/machine.MachineService/Dmesg',
        '/machine.MachineService/Events',
        '/machine.MachineService/Hostname',
        '/machine.MachineService/List',
        '/machine.MachineService/LoadAvg',
        '/machine.MachineService/Logs',
        '/machine.MachineService/Memory',
        '/machine.MachineService/Mounts',
        '/machine.MachineService/Netstat',
        '/machine.MachineService/NetworkDeviceStats',
        '/machine.MachineService/Processes',
        '/machine.MachineService/ServiceList',
        '/machine.MachineService/Stats',
        '/machine.MachineService/SystemStat',
        '/machine.MachineService/Version',
        '/time.TimeService/Time',
        '/time.TimeService/TimeCheck',
      ].sort(),
    );
    for (const m of ['/machine.MachineService/Read', '/machine.MachineService/Copy', '/machine.MachineService/PacketCapture', '/machine.MachineService/ApplyConfiguration', '/machine.MachineService/GenerateClientConfiguration', '/cosi.resource.State/Update']) {
      expect(allowed(m, ['os:reader']), m).toBe(false);
    }
  });

  it('operator adds power, service control and packet capture to reader, and nothing that changes configuration', () => {
    const extra = grantedTo('os:operator').filter((m) => !allowed(m, ['os:reader']));
    expect(extra).toEqual([
      '/machine.ImageService/Pull',
      '/machine.MachineService/EtcdAlarmDisarm',
      '/machine.MachineService/EtcdDefragment',
      '/machine.MachineService/EtcdSnapshot',
      '/machine.MachineService/PacketCapture',
      '/machine.MachineService/Reboot',
      '/machine.MachineService/Restart',
      '/machine.MachineService/ServiceRestart',
      '/machine.MachineService/ServiceStart',
      '/machine.MachineService/ServiceStop',
      '/machine.MachineService/Shutdown',
    ]);
    for (const m of ['/machine.MachineService/Copy', '/machine.MachineService/MetaWrite', '/machine.MachineService/MetaDelete', '/machine.MachineService/Upgrade', '/machine.MachineService/Reset', '/machine.MachineService/Rollback', '/machine.MachineService/ApplyConfiguration', '/cosi.resource.State/Create']) {
      expect(allowed(m, ['os:operator']), m).toBe(false);
    }
  });

  it('etcd:backup can take etcd snapshots and read etcd status, and nothing else (as Talos)', () => {
    expect(grantedTo('os:etcd:backup')).toEqual([
      '/machine.MachineService/EtcdAlarmList',
      '/machine.MachineService/EtcdMemberList',
      '/machine.MachineService/EtcdSnapshot',
      '/machine.MachineService/EtcdStatus',
    ]);
  });

  it('any one held role is enough', () => {
    expect(allowed('/machine.MachineService/Reboot', ['os:reader', 'os:operator'])).toBe(true);
    expect(allowed('/machine.MachineService/Version', ['os:etcd:backup', 'os:reader'])).toBe(true);
  });

  it('denies unknown roles, no roles, and unknown methods (even to admin)', () => {
    expect(allowed('/machine.MachineService/Version', ['os:impersonator'])).toBe(false);
    expect(allowed('/machine.MachineService/Version', ['OS:ADMIN'])).toBe(false);
    expect(allowed('/machine.MachineService/Version', [])).toBe(false);
    expect(allowed('/machine.MachineService/NoSuchMethod', ['os:admin'])).toBe(false);
    expect(allowed('machine.MachineService/Version', ['os:admin'])).toBe(false);
    expect(allowed('/machine.MachineService/version', ['os:admin'])).toBe(false);
    expect(allowed('toString', ['os:admin'])).toBe(false);
    expect(allowed('__proto__', ['os:admin'])).toBe(false);
  });
});
