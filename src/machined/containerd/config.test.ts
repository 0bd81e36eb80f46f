import { describe, expect, it } from 'vitest';
import { DISABLED_PLUGINS, REQUIRED_PLUGINS, containerdConfigToml } from './config.ts';

const toml = containerdConfigToml({ root: '/var/lib/containerd', state: '/system/run/containerd', address: '/system/run/containerd/containerd.sock' });

describe('containerd config.toml', () => {
  it('is version 2, with the data on EPHEMERAL, the state on tmpfs and the socket at Talos\'s path', () => {
    expect(toml).toMatch(/^version = 2$/m);
    expect(toml).toMatch(/^root = "\/var\/lib\/containerd"$/m);
    expect(toml).toMatch(/^state = "\/system\/run\/containerd"$/m);
    expect(toml).toMatch(/^\[grpc\]\n {2}address = "\/system\/run\/containerd\/containerd\.sock"$/m);
  });

  it('leaves out CRI and the plugins a node never uses, and keeps what running containers needs', () => {
    for (const p of ['io.containerd.grpc.v1.cri', 'io.containerd.snapshotter.v1.btrfs', 'io.containerd.snapshotter.v1.zfs', 'io.containerd.snapshotter.v1.aufs', 'io.containerd.snapshotter.v1.devmapper', 'io.containerd.internal.v1.tracing']) {
      expect(DISABLED_PLUGINS).toContain(p);
      expect(toml).toContain(`  "${p}",`);
    }
    // the tasks service of 1.6 needs the v1 runtime plugin loaded
    expect(DISABLED_PLUGINS).not.toContain('io.containerd.runtime.v1.linux');
    for (const p of REQUIRED_PLUGINS) expect(DISABLED_PLUGINS).not.toContain(p);
    expect(REQUIRED_PLUGINS).toEqual(expect.arrayContaining(['io.containerd.snapshotter.v1.overlayfs', 'io.containerd.runtime.v2.task', 'io.containerd.grpc.v1.tasks']));
  });

  it('logs warnings and errors only, unless asked', () => {
    expect(toml).toMatch(/^\[debug\]\n {2}address = ""\n {2}level = "warn"$/m);
    expect(containerdConfigToml({ root: '/r', state: '/s', address: '/s/c.sock', logLevel: 'debug' })).toContain('level = "debug"');
  });

  it('opens no TCP, debug or metrics listener', () => {
    expect(toml).not.toMatch(/tcp_address = "[^"]/);
    expect(toml).toMatch(/^\[debug\]\n {2}address = ""$/m);
    expect(toml).toMatch(/^\[metrics\]\n {2}address = ""$/m);
  });

  it('quotes paths as TOML strings', () => {
    const odd = containerdConfigToml({ root: '/tmp/a "b"\\c', state: '/s', address: '/s/c.sock' });
    expect(odd).toContain('root = "/tmp/a \\"b\\"\\\\c"');
  });
});
