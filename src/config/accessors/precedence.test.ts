// Each resolver's precedence between the v1alpha1 document and the newer documents.
import { describe, expect, it } from 'vitest';
import { typedConfig } from '../testing.ts';
import { clusterName, controlPlaneEndpoint, machineCredentials } from './cluster.ts';
import { etcd } from './etcd.ts';
import { environment, files, sysctls } from './machine.ts';
import { hostname, links, resolvers, staticHosts } from './network.ts';
import { timeServers, timeSync } from './time.ts';
import { ephemeralMount, filesystemTrim, volumeTrim } from './volumes.ts';

describe('the configuration accessors', () => {
  it('merge the documents over machine.sysctls and machine.env, a later document winning', () => {
    const c = typedConfig({ machine: { sysctls: { a: '1', b: '1' }, env: { X: '1', Y: '1' }, files: [{ path: '/var/f', content: 'x', op: 'create' }] } }, [
      { kind: 'SysctlConfig', params: { b: '2' } },
      { kind: 'EnvironmentConfig', variables: { Y: '2' } },
      { kind: 'EnvironmentConfig', variables: { Y: '3' } },
    ]);
    expect(sysctls(c)).toEqual({ a: '1', b: '2' });
    expect(environment(c)).toEqual({ X: '1', Y: '3' });
    expect(files(c)).toHaveLength(1);
    expect([sysctls(undefined), environment(undefined), files(undefined)]).toEqual([{}, {}, []]);
  });

  it('let the network documents replace machine.network parts', () => {
    const c = typedConfig({ machine: { network: { hostname: 'a', nameservers: ['1.1.1.1'], searchDomains: ['x'], extraHostEntries: [{ ip: '10.0.0.1', aliases: ['one'] }] } } }, [
      { kind: 'HostnameConfig', hostname: 'b' },
      { kind: 'ResolverConfig', nameservers: [{ address: '9.9.9.9' }] },
      { kind: 'StaticHostConfig', name: '10.0.0.2', hostnames: ['two'] },
      { kind: 'DHCPv4Config', name: 'eth1' },
    ]);
    expect(hostname(c)).toBe('b');
    expect(resolvers(c)).toEqual({ nameservers: ['9.9.9.9'], searchDomains: ['x'] });
    expect(staticHosts(c)).toEqual([{ ip: '10.0.0.1', aliases: ['one'] }, { ip: '10.0.0.2', aliases: ['two'] }]);
    expect(links(c)).toEqual([{ interface: 'eth1', dhcp: true }]);
    expect(hostname(typedConfig({ machine: { network: { hostname: 'a' } } }))).toBe('a');
  });

  it('take time from a TimeSyncConfig, else from machine.time', () => {
    const v1 = typedConfig({ machine: { time: { servers: ['a.example'], disabled: false } } });
    expect(timeSync(v1)).toEqual({ disabled: false, servers: ['a.example'] });
    expect(timeServers(v1)).toEqual(['a.example']);
    const doc = typedConfig(undefined, [{ kind: 'TimeSyncConfig', enabled: false, ntp: { servers: ['b.example'] } }]);
    expect(timeSync(doc)).toEqual({ disabled: true, servers: ['b.example'] });
    expect(timeServers(doc)).toEqual(['b.example']);
    expect(timeSync(typedConfig(undefined))).toEqual({});
    expect(timeServers(typedConfig({ machine: { time: { servers: [] } } }))).toBeUndefined();
    expect(timeSync(undefined)).toBeUndefined();
  });

  it('read the endpoint and cluster name from cluster or a KubeClusterConfig', () => {
    expect(controlPlaneEndpoint(typedConfig({ cluster: { controlPlane: { endpoint: 'https://a:6443' } } }))).toBe('https://a:6443');
    const kube = typedConfig(undefined, [{ kind: 'KubeClusterConfig', endpoint: 'https://b:6443', clusterName: 'k' } as never]);
    expect([controlPlaneEndpoint(kube), clusterName(kube)]).toEqual(['https://b:6443', 'k']);
    expect(machineCredentials(typedConfig(undefined))).toBeUndefined();
    expect(machineCredentials(typedConfig({ machine: { token: 't', ca: { crt: 'c' } } }))).toEqual({ token: 't', ca: { crt: 'c' } });
  });

  it('leave out the etcd arguments Bronze sets itself', () => {
    const e = etcd(typedConfig({ cluster: { etcd: { extraArgs: { 'election-timeout': '5000', 'data-dir': '/x' }, ca: { crt: 'c' } } } }));
    expect(e).toEqual({ extraArgs: { 'election-timeout': '5000' }, advertisedSubnets: [], listenSubnets: [] });
  });

  it('read a volume trim and the EPHEMERAL mount from its VolumeConfig', () => {
    const c = typedConfig(undefined, [
      { kind: 'VolumeConfig', name: 'EPHEMERAL', mount: { disableAccessTime: true }, trim: { enabled: true } } as never,
      { kind: 'FilesystemTrimConfig', interval: '1h' } as never,
    ]);
    expect(ephemeralMount(c)).toEqual({ disableAccessTime: true });
    expect(volumeTrim(c, 'EPHEMERAL')).toEqual({ enabled: true });
    expect(volumeTrim(c, 'STATE')).toBeUndefined();
    expect(filesystemTrim(c)?.interval).toBe('1h');
    expect(ephemeralMount(undefined)).toEqual({ disableAccessTime: false });
  });
});
