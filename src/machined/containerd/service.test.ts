// The containerd service spec, and (as root, where Debian's containerd is installed) the real
// daemon run by the supervisor with the config.toml machined writes: it starts, passes its
// health check over its socket, and loads every plugin that is not turned off.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Supervisor } from '../supervisor/supervisor.ts';
import { CONTAINERD_SOCKET } from '../../containerd/types.ts';
import { NODE_CONTAINERD, containerdSpec, hostContainerd, writeContainerdConfig } from './service.ts';

const HOST_CONTAINERD = '/usr/bin/containerd';
const canRun = process.getuid?.() === 0 && fs.existsSync(HOST_CONTAINERD);

describe('containerd service', () => {
  let dir: string | undefined;
  let sup: Supervisor | undefined;
  afterEach(async () => {
    await sup?.stop();
    sup = undefined;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("runs a node's containerd from the rootfs with Talos's socket, off the API's path", () => {
    const spec = containerdSpec(NODE_CONTAINERD, { PATH: '/sbin:/usr/sbin:/bin:/usr/bin' });
    expect(spec.id).toBe('containerd');
    expect(spec.command).toBe('/usr/bin/containerd');
    expect(spec.args).toEqual(['--config', '/system/etc/containerd/config.toml']);
    expect(NODE_CONTAINERD.address).toBe('/system/run/containerd/containerd.sock');
    expect(NODE_CONTAINERD.address).toBe(CONTAINERD_SOCKET); // where the client (src/containerd/) dials
    expect(NODE_CONTAINERD.root).toBe('/var/lib/containerd');
    expect(spec.dependsOn).toEqual([]);
    expect(spec.startNice).toBeUndefined(); // alone in /system/runtime, a nice value weighs against nobody
    expect(spec.listening).toBeUndefined();
    expect(spec.user).toBeUndefined(); // root: it must be
    expect(spec.healthCheck).toBeTypeOf('function');
  });

  it('keeps a host run inside its run directory', () => {
    const p = hostContainerd('/tmp/run-x');
    for (const v of [p.root, p.state, p.address, p.configPath]) expect(v.startsWith('/tmp/run-x/')).toBe(true);
  });

  it('writes config.toml before every start', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-containerd-'));
    const p = hostContainerd(dir);
    writeContainerdConfig(p);
    expect(fs.readFileSync(p.configPath, 'utf8')).toContain(`root = "${p.root}"`);
  });

  it.skipIf(!canRun)('starts Debian\'s containerd under the supervisor, healthy, every plugin that is on loaded', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-containerd-'));
    const p = hostContainerd(dir, HOST_CONTAINERD);
    const spec = containerdSpec(p, { PATH: process.env.PATH ?? '/usr/bin:/usr/sbin' });
    sup = new Supervisor([spec]);
    sup.start();
    const deadline = Date.now() + 20_000;
    while (!(sup.get('containerd')?.state === 'Running' && sup.get('containerd')?.healthy)) {
      if (Date.now() > deadline) throw new Error(`containerd not healthy: ${JSON.stringify(sup.get('containerd'))}\n${sup.logs('containerd').join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(fs.statSync(p.address).isSocket()).toBe(true);
    const ctr = fs.existsSync('/usr/bin/ctr');
    if (ctr) {
      const plugins = execFileSync('/usr/bin/ctr', ['--address', p.address, 'plugins', 'ls'], { encoding: 'utf8' });
      const notOk = plugins.split('\n').slice(1).filter((l) => l.trim() && !/\sok\s*$/.test(l));
      expect(notOk).toEqual([]);
      expect(plugins).not.toMatch(/\bcri\b/);
    }
    // warn and above only: a healthy start says nothing
    expect(sup.logs('containerd').filter((l) => /level=info/.test(l))).toEqual([]);
  }, 30_000);
});
