import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { MAINTENANCE_API, MAINTENANCE_CALLER_ROLES, TALOS_MAINTENANCE_ONLY, maintenanceRefusal } from './maintenance.ts';
import { grpcObject } from './protos.ts';
import { RBAC, allowed, methodsOf } from './rbac.ts';
import { RESOURCE_DEFINITIONS } from './resources/registry.ts';

const all = methodsOf(grpcObject());
const served = (roles?: readonly string[]) => all.filter((m) => maintenanceRefusal(m, roles) === undefined);

describe('the maintenance API table', () => {
  it('has these exceptions to the reader rules, as Talos', () => {
    expect(Object.keys(MAINTENANCE_API).sort()).toEqual(
      [
        '/machine.MachineService/ApplyConfiguration',
        '/machine.MachineService/GenerateClientConfiguration',
        '/machine.MachineService/Upgrade',
        '/machine.MachineService/Reset',
        '/cosi.resource.State/Create',
        '/cosi.resource.State/Update',
        '/cosi.resource.State/Destroy',
      ].sort(),
    );
    expect(MAINTENANCE_CALLER_ROLES).toEqual(['os:reader']);
  });

  it('names only RPCs that exist', () => {
    const have = new Set(all);
    for (const m of Object.keys(MAINTENANCE_API)) expect(have.has(m), m).toBe(true);
  });

  it('serves each of Talos\'s maintenance-only methods that Bronze has to anyone (wipe disk joins when it exists)', () => {
    const have = new Set(all);
    const present = TALOS_MAINTENANCE_ONLY.filter((m) => have.has(m));
    expect(present).toContain('/machine.MachineService/ApplyConfiguration');
    for (const m of present) expect(MAINTENANCE_API[m], m).toEqual({ serve: 'anyone' });
  });

  it('serves a maintenance caller the reader API and apply-config, nothing else', () => {
    const readerApi = all.filter((m) => allowed(m, ['os:reader']));
    expect(served()).toEqual([...readerApi, '/machine.MachineService/ApplyConfiguration'].sort());
    // What `bronzectl version/get/dmesg/logs/memory --insecure` call.
    for (const m of ['Version', 'Dmesg', 'Logs', 'Memory', 'ServiceList', 'Hostname', 'DiskStats', 'Mounts', 'Processes']) {
      expect(maintenanceRefusal(`/machine.MachineService/${m}`), m).toBeUndefined();
    }
    for (const m of ['Get', 'List', 'Watch']) expect(maintenanceRefusal(`/cosi.resource.State/${m}`), m).toBeUndefined();
  });

  it('refuses what a reader may not do with PERMISSION_DENIED, saying why and what to do', () => {
    for (const m of ['Reboot', 'Shutdown', 'Read', 'Copy', 'Bootstrap', 'Install', 'UpgradeStream', 'EtcdSnapshot', 'ServiceRestart', 'PacketCapture']) {
      const path = `/machine.MachineService/${m}`;
      expect(RBAC[path], path).toBeDefined();
      expect(maintenanceRefusal(path), path).toEqual({
        code: grpc.status.PERMISSION_DENIED,
        details: expect.stringMatching(/ requires (one of )?os:admin.*in maintenance mode every caller is os:reader: apply a configuration first \(bronzectl apply-config --insecure\)/),
      });
    }
    // Upgrade and Reset: Talos's handlers take them in maintenance mode, from SideroLink admins only.
    for (const m of ['Upgrade', 'Reset']) {
      expect(maintenanceRefusal(`/machine.MachineService/${m}`)).toMatchObject({ code: grpc.status.PERMISSION_DENIED, details: expect.stringMatching(/requires os:admin/) });
      expect(maintenanceRefusal(`/machine.MachineService/${m}`, ['os:admin'])).toBeUndefined();
    }
    expect(maintenanceRefusal('/machine.MachineService/GenerateClientConfiguration')).toEqual({
      code: grpc.status.PERMISSION_DENIED,
      details: expect.stringMatching(/^client configuration \(bronzeconfig\) can't be generated in maintenance mode/),
    });
    for (const m of ['Create', 'Update', 'Destroy']) {
      expect(maintenanceRefusal(`/cosi.resource.State/${m}`)).toEqual({ code: grpc.status.PERMISSION_DENIED, details: 'resources are read-only in maintenance mode' });
      // not even for an admin
      expect(maintenanceRefusal(`/cosi.resource.State/${m}`, ['os:admin'])?.code).toBe(grpc.status.PERMISSION_DENIED);
    }
    // What apid does not serve at all, and methods nobody has.
    expect(maintenanceRefusal('/securityapi.SecurityService/Certificate')?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(maintenanceRefusal('/grpc.health.v1.Health/Check')?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(maintenanceRefusal('/machine.MachineService/NoSuchThing')?.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it('gives a (SideroLink) admin what its role gives it, as Talos; Bronze\'s callers never are one', () => {
    for (const m of ['Reboot', 'Read', 'Upgrade', 'Reset', 'Version']) expect(maintenanceRefusal(`/machine.MachineService/${m}`, ['os:admin']), m).toBeUndefined();
    expect(maintenanceRefusal('/machine.MachineService/GenerateClientConfiguration', ['os:admin'])?.code).toBe(grpc.status.PERMISSION_DENIED);
  });
});

describe('nothing sensitive to a maintenance caller', () => {
  // Every type Talos marks sensitive (meta.Sensitive in pkg/machinery/resources, Talos v1.13);
  // of them Bronze has the machine config, and adds its typed form of it.
  const TALOS_SENSITIVE = new Set([
    'APIServerConfigs.kubernetes.talos.dev', 'ApiCertificates.secrets.talos.dev',
    'AuditPolicyConfigs.kubernetes.talos.dev', 'AuthenticationConfigs.kubernetes.talos.dev',
    'AuthorizationConfigs.kubernetes.talos.dev', 'CertSANs.secrets.talos.dev',
    'CustomizationConfigs.cri.talos.dev', 'DeviceConfigSpecs.net.talos.dev',
    'DiscoveryConfigs.cluster.talos.dev', 'EncryptionSalts.secrets.talos.dev',
    'EtcFileSpecs.files.talos.dev', 'EtcdEncryptionConfigs.kubernetes.talos.dev',
    'EtcdRootSecrets.secrets.talos.dev', 'EtcdSecrets.secrets.talos.dev',
    'ExtensionServiceConfigs.runtime.talos.dev', 'KubeSpanConfigs.kubespan.talos.dev',
    'KubeSpanIdentities.kubespan.talos.dev', 'KubeletConfigs.kubernetes.talos.dev',
    'KubeletSecrets.secrets.talos.dev', 'KubeletSpecs.kubernetes.talos.dev',
    'KubernetesDynamicCerts.secrets.talos.dev', 'KubernetesRootSecrets.secrets.talos.dev',
    'KubernetesSecrets.secrets.talos.dev', 'LinkSpecs.net.talos.dev',
    'MachineConfigs.config.talos.dev', 'MaintenanceRootSecrets.secrets.talos.dev',
    'NodeAnnotationSpecs.k8s.talos.dev', 'NodeCordonedSpecs.k8s.talos.dev',
    'NodeLabelSpecs.k8s.talos.dev', 'NodeTaintSpecs.k8s.talos.dev', 'OOMActions.talos.dev',
    'OSRootSecrets.secrets.talos.dev', 'OperatorSpecs.net.talos.dev',
    'RegistryConfigs.cri.talos.dev', 'SiderolinkConfigs.siderolink.talos.dev',
    'SiderolinkTunnels.siderolink.talos.dev', 'TrustdCertificates.secrets.talos.dev',
    'VolumeConfigs.block.talos.dev',
  ]);

  it('the sensitive types are those Talos marks sensitive, and Bronze\'s typed machine config', () => {
    const sensitive = RESOURCE_DEFINITIONS.filter((d) => d.sensitivity === 'sensitive').map((d) => d.type).sort();
    expect(sensitive).toEqual(['MachineConfigs.config.talos.dev', 'ParsedMachineConfigs.config.bronze.dev']);
    for (const d of RESOURCE_DEFINITIONS) {
      if (TALOS_SENSITIVE.has(d.type)) expect(d.sensitivity, d.type).toBe('sensitive');
    }
  });

  it('a maintenance caller is a reader, never an admin: the state service shows it no sensitive type', () => {
    // src/machined/api/resources.ts shows sensitive types only to callers holding os:admin.
    expect(MAINTENANCE_CALLER_ROLES).not.toContain('os:admin');
    // and nothing that reads files or config or secrets
    for (const m of ['/machine.MachineService/Read', '/machine.MachineService/Copy', '/machine.MachineService/EtcdSnapshot', '/machine.MachineService/GenerateClientConfiguration']) {
      expect(maintenanceRefusal(m), m).toBeDefined();
    }
  });
});
