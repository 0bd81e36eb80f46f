// The declared containers as the runtime and the ContainerSpecs resource take them, from real
// documents through the validator: Talos's defaults (read-only host paths, writable tmpfs,
// restricted profile, no network), millicores and bytes, the image's normal form, the probe
// with Kubernetes's defaults, and the dependencies.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../validate.ts';
import { containerDocs, PROBE_DEFAULTS, runMount } from './containers.ts';

const yaml = `apiVersion: v1alpha1
kind: ContainerConfig
name: web
image: 10.0.2.2:5000/busybox:1
entrypoint: [httpd]
args: [-f, -p, "8080"]
workingDir: /www
runAs: {uid: 65534, gid: 65534}
environment: [A=1, B=x=y]
mounts:
  - tmpfs: {destination: /tmp, size: 64MiB}
  - hostPath: {source: /var/www, destination: /www}
  - hostPath: {source: /var/data, destination: /data, options: [rw, noexec, rshared]}
  - tmpfs: {destination: /run, options: [ro]}
network: {mode: host}
resources: {limits: {cpu: 500m, memory: 64MiB}}
dependsOn: {containers: [db], networks: [addresses], time: true, paths: [/var/www]}
---
apiVersion: v1alpha1
kind: ContainerConfig
name: db
image: busybox
---
apiVersion: v1alpha1
kind: ContainerHealthConfig
name: web
httpGet: {port: 8080}
failureThreshold: 2
`;

describe('the declared containers', () => {
  const c = parseConfig(yaml);

  it('resolve each ContainerConfig into what the runtime runs', () => {
    const [web, db] = containerDocs(c).map((d) => d.spec);
    expect(web).toEqual({
      name: 'web',
      image: '10.0.2.2:5000/busybox:1',
      entrypoint: ['httpd'],
      args: ['-f', '-p', '8080'],
      workingDir: '/www',
      runAs: { uid: 65534, gid: 65534 },
      environment: ['A=1', 'B=x=y'],
      mounts: [
        { type: 'tmpfs', destination: '/tmp', options: ['nosuid', 'nodev', 'mode=1777', 'size=67108864'] },
        { type: 'bind', source: '/var/www', destination: '/www', options: ['bind', 'nosuid', 'nodev', 'ro', 'rprivate'] },
        { type: 'bind', source: '/var/data', destination: '/data', options: ['bind', 'nosuid', 'nodev', 'noexec', 'rshared'] },
        { type: 'tmpfs', destination: '/run', options: ['nosuid', 'nodev', 'mode=1777', 'ro'] },
      ],
      profile: 'restricted',
      capabilities: { add: [], drop: [] },
      network: 'host',
      limits: { cpuMillis: 500, memoryBytes: 64 * 1024 ** 2 },
    });
    // Talos's defaults: restricted, no network, no limits; the image in containerd's normal form.
    expect(db).toEqual({ name: 'db', image: 'docker.io/library/busybox:latest', environment: [], mounts: [], profile: 'restricted', capabilities: { add: [], drop: [] }, network: 'none', limits: {} });
  });

  it('project the ContainerSpecs resource as Talos\'s ConfigController does', () => {
    const [web, db] = containerDocs(c);
    expect(web!.resource).toEqual({
      image: { ref: '10.0.2.2:5000/busybox:1' },
      entrypoint: ['httpd'],
      args: ['-f', '-p', '8080'],
      workingDir: '/www',
      runAs: { uid: 65534, gid: 65534 },
      environment: ['A=1', 'B=x=y'],
      mounts: [
        { kind: 'tmpfs', destination: '/tmp', size: 67108864 },
        { kind: 'hostPath', source: '/var/www', destination: '/www', options: ['ro'] },
        { kind: 'hostPath', source: '/var/data', destination: '/data', options: ['noexec', 'rshared'] },
        { kind: 'tmpfs', destination: '/run', options: ['ro'] },
      ],
      network: { hostNetwork: true },
      resources: { memoryLimit: 64 * 1024 ** 2, cpuLimit: 500 },
      dependsOn: { paths: ['/var/www'], networks: ['addresses'], time: true, containers: ['db'] },
    });
    expect(db!.resource).toEqual({ image: { ref: 'docker.io/library/busybox:latest' } });
    expect(web!.dependsOn).toEqual({ paths: ['/var/www'], networks: ['addresses'], time: true, containers: ['db'] });
    expect(db!.dependsOn).toEqual({ paths: [], networks: [], time: false, containers: [] });
  });

  it('carry the ContainerHealthConfig of the same name, with Kubernetes\'s defaults', () => {
    expect(containerDocs(c)[0]!.probe).toEqual({ httpGet: { port: 8080, path: '/', host: '127.0.0.1' }, ...PROBE_DEFAULTS, failureThreshold: 2 });
    expect(containerDocs(c)[1]!.probe).toBeUndefined();
    expect(containerDocs(undefined)).toEqual([]);
  });

  it('map a privileged profile and capabilities, and an rbind', () => {
    const p = parseConfig(`apiVersion: v1alpha1\nkind: ContainerConfig\nname: p\nimage: busybox\nsecurity: {profile: privileged, capabilities: {add: [NET_ADMIN], drop: [ALL]}}\n`);
    const [d] = containerDocs(p);
    expect(d!.spec).toMatchObject({ profile: 'privileged', capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] } });
    expect(d!.resource.security).toEqual({ privileged: true, capabilitiesAdd: ['NET_ADMIN'], capabilitiesDrop: ['ALL'] });
    expect(runMount({ kind: 'hostPath', source: '/var/x', destination: '/x', options: ['rbind', 'ro'] })).toEqual({ type: 'bind', source: '/var/x', destination: '/x', options: ['rbind', 'nosuid', 'nodev', 'ro', 'rprivate'] });
    expect(runMount({ kind: 'userVolume', volumeID: 'u-x', destination: '/x' })).toBeUndefined();
  });
});
