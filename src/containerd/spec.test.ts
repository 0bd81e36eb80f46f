import { describe, expect, it } from 'vitest';
import { buildSpec, cpuMax, containerCapabilities, mergeEnv, processArgs, processUser, type ImageConfig, type OciSpec } from './spec.ts';
import { runtimeSpecValidator } from './spec-schema.ts';
import { readHostDevices, devMajorMinor, ownBoundingCaps, ownNofileHard } from './spec-devices.ts';
import { nofileWithin } from './spec.ts';
import type { ContainerRunSpec } from './types.ts';

const image: ImageConfig = { Env: ['PATH=/bin', 'A=1'], Entrypoint: ['/bin/sh', '-c'], Cmd: ['echo hi'], WorkingDir: '/srv' };

function run(over: Partial<ContainerRunSpec> = {}): ContainerRunSpec {
  return {
    name: 'web',
    image: '10.0.2.2:5000/busybox:1',
    environment: [],
    mounts: [],
    profile: 'restricted',
    capabilities: { add: [], drop: [] },
    network: 'none',
    limits: {},
    ...over,
  };
}

const ctx = { namespace: 'taloscontainers', arch: 'amd64' };
const validate = runtimeSpecValidator();

function valid(spec: OciSpec): OciSpec {
  expect(validate(spec)).toEqual([]);
  return spec;
}

describe('buildSpec against the runtime-spec schema', () => {
  it('restricted, network none', () => {
    const s = valid(buildSpec(run(), image, ctx));
    expect(s.root.readonly).toBe(true);
    expect(s.process.noNewPrivileges).toBe(true);
    expect(s.process.oomScoreAdj).toBe(1000); // the operator's workloads go before the node in a global OOM
    expect(s.process.capabilities.bounding).toEqual([]);
    expect(s.linux.namespaces.map((n) => n.type)).toEqual(['pid', 'ipc', 'mount', 'uts', 'network']);
    expect(s.hostname).toBe('web');
    expect(s.linux.seccomp?.defaultAction).toBe('SCMP_ACT_ERRNO');
    expect(s.linux.seccomp?.architectures).toEqual(['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32']);
    expect(s.linux.maskedPaths).toContain('/proc/kcore');
    expect(s.linux.readonlyPaths).toContain('/proc/sys');
    expect(s.mounts.find((m) => m.destination === '/sys')?.options).toContain('ro');
    expect(s.mounts.find((m) => m.destination === '/sys/fs/cgroup')?.options).toContain('ro');
    expect(s.linux.resources.devices[0]).toEqual({ allow: false, access: 'rwm' });
    expect(s.linux.resources.devices.filter((d) => d.allow).every((d) => d.type === 'c')).toBe(true);
    expect(s.linux.resources.pids.limit).toBeGreaterThan(0);
    expect(s.linux.cgroupsPath).toBe('/taloscontainers/web');
    expect(s.linux.devices).toBeUndefined();
  });

  it('restricted holds no CAP_MKNOD, and setns stays refused by seccomp without CAP_SYS_ADMIN', () => {
    const s = valid(buildSpec(run({ capabilities: { add: ['NET_BIND_SERVICE'], drop: [] } }), image, ctx));
    expect(s.process.capabilities.bounding).toEqual(['CAP_NET_BIND_SERVICE']);
    expect(s.process.capabilities.effective).not.toContain('CAP_MKNOD');
    const allowed = new Set(s.linux.seccomp!.syscalls!.filter((r) => r.action === 'SCMP_ACT_ALLOW').flatMap((r) => r.names));
    // containers-common's profile lets mount(2) through (the missing capability refuses it) but
    // gates setns and its kin on CAP_SYS_ADMIN, and refuses kexec outright.
    expect(allowed.has('setns')).toBe(false);
    expect(allowed.has('kexec_load')).toBe(false);
    expect(allowed.has('read')).toBe(true);
  });

  it('restricted with SYS_ADMIN added gets the rules the profile includes for it', () => {
    const s = valid(buildSpec(run({ capabilities: { add: ['SYS_ADMIN'], drop: [] } }), image, ctx));
    const allowed = new Set(s.linux.seccomp!.syscalls!.filter((r) => r.action === 'SCMP_ACT_ALLOW').flatMap((r) => r.names));
    expect(allowed.has('setns')).toBe(true);
  });

  it('privileged, host network', () => {
    const dev = { path: '/dev/loop0', type: 'b' as const, major: 7, minor: 0, fileMode: 0o660, uid: 0, gid: 6 };
    const s = valid(buildSpec(run({ profile: 'privileged', network: 'host' }), image, { ...ctx, hostDevices: [dev] }));
    expect(s.root.readonly).toBe(false);
    expect(s.process.noNewPrivileges).toBe(false);
    expect(s.process.capabilities.bounding).toContain('CAP_SYS_ADMIN');
    expect(s.process.capabilities.bounding).toContain('CAP_MKNOD');
    expect(s.process.capabilities.bounding).not.toContain('CAP_SYS_MODULE');
    expect(s.process.capabilities.bounding).not.toContain('CAP_SYS_BOOT');
    expect(s.linux.seccomp).toBeUndefined();
    expect(s.linux.maskedPaths).toBeUndefined();
    expect(s.linux.resources.devices).toEqual([{ allow: true, access: 'rwm' }]);
    expect(s.linux.devices).toEqual([dev]);
    expect(s.linux.namespaces.map((n) => n.type)).toEqual(['pid', 'ipc', 'mount']);
    expect(s.hostname).toBeUndefined();
    expect(s.mounts.find((m) => m.destination === '/sys')?.options).not.toContain('ro');
  });

  it('host network binds the node\'s resolv.conf and hosts copies read-only; none does not', () => {
    const hostEtcFiles = [{ destination: '/etc/resolv.conf', source: '/system/run/containers/ns/web/resolv.conf' }];
    const h = valid(buildSpec(run({ network: 'host' }), image, { ...ctx, hostEtcFiles }));
    expect(h.mounts.find((m) => m.destination === '/etc/resolv.conf')).toEqual({ destination: '/etc/resolv.conf', type: 'bind', source: hostEtcFiles[0]!.source, options: ['rbind', 'ro', 'rprivate'] });
    const n = valid(buildSpec(run({ network: 'none' }), image, { ...ctx, hostEtcFiles }));
    expect(n.mounts.find((m) => m.destination === '/etc/resolv.conf')).toBeUndefined();
  });

  it('privileged with drops; drop ALL then add', () => {
    expect(containerCapabilities({ profile: 'privileged', capabilities: { add: [], drop: ['NET_RAW'] } })).not.toContain('CAP_NET_RAW');
    expect(containerCapabilities({ profile: 'privileged', capabilities: { add: ['KILL'], drop: ['ALL'] } })).toEqual(['CAP_KILL']);
    expect(() => containerCapabilities({ profile: 'restricted', capabilities: { add: ['SYS_MODULE'], drop: [] } })).toThrow(/never granted/);
    expect(() => containerCapabilities({ profile: 'restricted', capabilities: { add: ['BOGUS'], drop: [] } })).toThrow(/unknown capability/);
    // Only what the runtime's own bounding set holds (here: all but CAP_SYS_RESOURCE, 24).
    const bounding = new Set(Array.from({ length: 41 }, (_, i) => i).filter((i) => i !== 24));
    expect(containerCapabilities({ profile: 'privileged', capabilities: { add: [], drop: [] } }, bounding)).not.toContain('CAP_SYS_RESOURCE');
    expect(() => containerCapabilities({ profile: 'restricted', capabilities: { add: ['SYS_RESOURCE'], drop: [] } }, bounding)).toThrow(/bounding set/);
    expect(ownBoundingCaps()?.has(0)).toBe(true);
  });

  it('limits: memory.max and cpu.max', () => {
    const s = valid(buildSpec(run({ limits: { cpuMillis: 1500, memoryBytes: 64 * 1024 * 1024 } }), image, ctx));
    expect(s.linux.resources.memory).toEqual({ limit: 67108864 });
    expect(s.linux.resources.cpu).toEqual({ quota: 150000, period: 100000 });
    expect(cpuMax(1000)).toEqual({ quota: 100000, period: 100000 });
    expect(cpuMax(250)).toEqual({ quota: 25000, period: 100000 });
    expect(cpuMax(5)).toEqual({ quota: 1000, period: 100000 });
    expect(() => cpuMax(0)).toThrow();
  });

  it('mounts: tmpfs with size, bind ro and rw', () => {
    const s = valid(
      buildSpec(
        run({
          mounts: [
            { type: 'tmpfs', destination: '/tmp', options: ['size=16m', 'mode=1777'] },
            { type: 'bind', destination: '/data', source: '/var/mnt/data', options: ['ro'] },
            { type: 'bind', destination: '/rw', source: '/var/lib/x', options: ['rw'] },
            { type: 'tmpfs', destination: '/run', options: ['size=1m'] },
          ],
        }),
        image,
        ctx,
      ),
    );
    expect(s.mounts.find((m) => m.destination === '/tmp')).toEqual({ destination: '/tmp', type: 'tmpfs', source: 'tmpfs', options: ['nodev', 'nosuid', 'size=16m', 'mode=1777'] });
    expect(s.mounts.find((m) => m.destination === '/data')).toEqual({ destination: '/data', type: 'bind', source: '/var/mnt/data', options: ['rbind', 'ro', 'rprivate'] });
    expect(s.mounts.find((m) => m.destination === '/rw')?.options).toEqual(['rbind', 'rw', 'rprivate']);
    expect(s.mounts.filter((m) => m.destination === '/run')).toHaveLength(1);
    expect(s.mounts.find((m) => m.destination === '/run')?.options).toContain('size=1m');
    expect(() => buildSpec(run({ mounts: [{ type: 'bind', destination: '/x', options: [] }] }), image, ctx)).toThrow(/absolute host source/);
  });

  it('arm64 gets the arm64 arches and the arm-only syscalls', () => {
    const s = valid(buildSpec(run(), image, { ...ctx, arch: 'arm64' }));
    expect(s.linux.seccomp?.architectures).toEqual(['SCMP_ARCH_AARCH64', 'SCMP_ARCH_ARM']);
    const names = new Set(s.linux.seccomp!.syscalls!.flatMap((r) => r.names));
    expect(names.has('arm_fadvise64_64')).toBe(true);
    expect(names.has('arch_prctl')).toBe(false);
  });

  it('runs as a user with ambient caps', () => {
    const s = valid(buildSpec(run({ runAs: { uid: 1000, gid: 1000 }, capabilities: { add: ['NET_BIND_SERVICE'], drop: [] } }), image, ctx));
    expect(s.process.user).toEqual({ uid: 1000, gid: 1000 });
    expect(s.process.capabilities.ambient).toEqual(['CAP_NET_BIND_SERVICE']);
  });
});

describe('process', () => {
  it('entrypoint and args follow Docker', () => {
    expect(processArgs({}, image)).toEqual(['/bin/sh', '-c', 'echo hi']);
    expect(processArgs({ args: ['echo bye'] }, image)).toEqual(['/bin/sh', '-c', 'echo bye']);
    expect(processArgs({ entrypoint: ['/bin/httpd'] }, image)).toEqual(['/bin/httpd']);
    expect(processArgs({ entrypoint: ['/bin/httpd'], args: ['-f'] }, image)).toEqual(['/bin/httpd', '-f']);
    expect(processArgs({ args: ['/bin/true'] }, {})).toEqual(['/bin/true']);
    expect(() => processArgs({}, {})).toThrow(/no command/);
  });

  it('env: document over image, default PATH when the image has none', () => {
    expect(mergeEnv(['PATH=/bin', 'A=1'], ['A=2', 'B=3'])).toEqual(['PATH=/bin', 'A=2', 'B=3']);
    const s = buildSpec(run({ environment: ['X=1'] }), { Cmd: ['/bin/true'] }, ctx);
    expect(s.process.env).toEqual(['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'X=1']);
    expect(s.process.cwd).toBe('/');
    expect(buildSpec(run({ workingDir: '/w' }), image, ctx).process.cwd).toBe('/w');
    expect(buildSpec(run(), image, ctx).process.cwd).toBe('/srv');
  });

  it('user: image User, runAs overrides, names need a resolver', () => {
    expect(processUser({}, { User: '100:101' })).toEqual({ uid: 100, gid: 101 });
    expect(processUser({}, { User: '100' })).toEqual({ uid: 100, gid: 0 });
    expect(processUser({ runAs: { uid: 5 } }, { User: '100:101' })).toEqual({ uid: 5, gid: 0 });
    expect(processUser({ runAs: { gid: 7 } }, { User: '100:101' })).toEqual({ uid: 100, gid: 7 });
    expect(() => processUser({}, { User: 'nobody' })).toThrow(/runAs.uid/);
    expect(processUser({}, { User: 'nobody' }, () => ({ uid: 65534, gid: 65534 }))).toEqual({ uid: 65534, gid: 65534 });
  });
});

describe('open files limit', () => {
  it('is clamped to what the runtime holds', () => {
    expect(nofileWithin(undefined)).toEqual({ soft: 1024, hard: 524288 });
    expect(nofileWithin(20000)).toEqual({ soft: 1024, hard: 20000 });
    expect(nofileWithin(512)).toEqual({ soft: 512, hard: 512 });
    const s = buildSpec(run(), image, { ...ctx, nofile: { soft: 10, hard: 20 } });
    expect(s.process.rlimits).toEqual([{ type: 'RLIMIT_NOFILE', soft: 10, hard: 20 }]);
    expect(ownNofileHard()).toBeGreaterThan(0);
  });
});

describe('host devices', () => {
  it('major/minor of a dev_t', () => {
    expect(devMajorMinor(0x0103n)).toEqual({ major: 1, minor: 3 });
    expect(devMajorMinor((259n << 8n) | 1n)).toEqual({ major: 259, minor: 1 });
  });
  it('reads /dev', () => {
    const devs = readHostDevices();
    expect(devs.find((d) => d.path === '/dev/null')).toMatchObject({ type: 'c', major: 1, minor: 3 });
    expect(devs.some((d) => d.path.startsWith('/dev/pts/'))).toBe(false);
  });
});
