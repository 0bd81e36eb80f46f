import { silentLogger } from '../../lib/log.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigManager, type ConfigManagerDeps, ConfigRejected, VOLATILE_NOTE, configDiff, rebootReasons } from './manager.ts';

const quiet = silentLogger;
const base = 'version: v1alpha1\nmachine:\n  type: controlplane\n  network:\n    hostname: a\n  sysctls:\n    vm.swappiness: "10"\ncluster:\n  clusterName: c\n';

describe('what needs a reboot', () => {
  it('nothing for live sections and kinds, the field for the rest', () => {
    expect(rebootReasons(undefined, base)).toEqual([]);
    expect(rebootReasons(base, base.replace('hostname: a', 'hostname: b').replace('"10"', '"20"'))).toEqual([]);
    expect(rebootReasons(base, base + '---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: x\n')).toEqual([]);
    expect(rebootReasons(base, base.replace('type: controlplane', 'type: worker'))).toEqual(['machine.type changed']);
    expect(rebootReasons(base, base.replace('clusterName: c', 'clusterName: d'))).toEqual(['cluster.clusterName changed']);
    // As in Talos: machine.install is read only when installing.
    expect(rebootReasons(base, base.replace('  type: controlplane\n', '  type: controlplane\n  install:\n    disk: /dev/vda\n'))).toEqual([]);
  });
  it('diffs as a unified diff', () => {
    expect(configDiff(base, base.replace('hostname: a', 'hostname: b'))).toMatch(/-    hostname: a\n\+    hostname: b/);
  });
});

describe('ConfigManager', () => {
  let dir: string;
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  function manager(
    validate = (t: string) => ({ errors: t.includes('bad') ? ['machine.network.hostname: bad'] : [], warnings: [] }),
    more: Partial<ConfigManagerDeps> = {},
  ) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-cfgmgr-'));
    const activated: string[] = [];
    const reboots: string[] = [];
    const m = new ConfigManager({ stateDir: dir, validate, activate: async (t) => void activated.push(t), reboot: (r) => reboots.push(r), log: quiet, ...more });
    return { m, activated, reboots };
  }

  const valid = (t: string) => ({ errors: t.includes('bad') ? ['machine.network.hostname: bad'] : [], warnings: [] });

  it('with STATE in memory, refuses the modes that reboot (the configuration would be lost), and says so on a live apply', async () => {
    const { m, activated, reboots } = manager(valid, { persistent: () => false });
    await m.adopt(base, true);
    const next = base.replace('clusterName: c', 'clusterName: z');
    for (const mode of ['REBOOT', 'STAGED', 'AUTO'] as const) {
      const err = await m.apply(next, mode).catch((e) => e);
      expect(err, mode).toBeInstanceOf(ConfigRejected);
      expect(err.kind).toBe('state');
      expect(err.errors[0]).toMatch(/would lose this configuration: STATE is in memory on this node \(no installed disk\), so a configuration lasts until the node reboots or powers off\. Apply it with --mode=no-reboot/);
    }
    expect(reboots).toEqual([]);
    expect(m.persisted()).toBe(base);
    const live = base.replace('hostname: a', 'hostname: b');
    const r = await m.apply(live, 'AUTO');
    expect(r).toMatchObject({ mode: 'NO_REBOOT', details: `Applied without a reboot. ${VOLATILE_NOTE}.` });
    expect(activated.at(-1)).toBe(live);
  });

  it('with a STATE that cannot keep it: applies in memory only and says so; refuses reboot and staged', async () => {
    const broken = 'STATE (/dev/vda5) cannot be mounted (EINVAL)';
    const { m, activated, reboots } = manager(undefined, { notKept: () => broken });
    const r = await m.apply(base, 'NO_REBOOT');
    expect(r.mode).toBe('NO_REBOOT');
    expect(r.details).toBe(`Applied in memory only: ${broken}. This configuration is lost at the next reboot.`);
    expect(activated).toEqual([base]);
    expect(m.persisted(), 'nothing written to the memory-backed directory').toBeUndefined();
    for (const mode of ['REBOOT', 'STAGED'] as const) {
      const err = await m.apply(base, mode).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigRejected);
      expect((err as ConfigRejected).kind).toBe('state');
      expect((err as Error).message).toContain(broken);
    }
    // Auto with changes that need a reboot is refused too; without, it is in memory only.
    await expect(m.apply(base.replace('type: controlplane', 'type: worker'), 'AUTO')).rejects.toMatchObject({ kind: 'state' });
    expect((await m.apply(base.replace('hostname: a', 'hostname: b'), 'AUTO')).details).toMatch(/^Applied in memory only/);
    expect(reboots).toEqual([]);
    expect(m.persisted()).toBeUndefined();
  });

  it('applies live in no-reboot and auto modes, persisting the file', async () => {
    const { m, activated, reboots } = manager();
    await m.adopt(base, true);
    const next = base.replace('hostname: a', 'hostname: b');
    const r = await m.apply(next, 'AUTO');
    expect(r.mode).toBe('NO_REBOOT');
    expect(activated.at(-1)).toBe(next);
    expect(fs.readFileSync(path.join(dir, 'config.yaml'), 'utf8')).toBe(next);
    expect(fs.statSync(path.join(dir, 'config.yaml')).mode & 0o777).toBe(0o600);
    expect(reboots).toEqual([]);
  });

  it('resolves auto to a reboot when needed, and refuses no-reboot then', async () => {
    const { m, reboots } = manager();
    await m.adopt(base, true);
    const next = base.replace('clusterName: c', 'clusterName: z');
    await expect(m.apply(next, 'NO_REBOOT')).rejects.toMatchObject({ kind: 'needs-reboot' });
    expect(fs.readFileSync(path.join(dir, 'config.yaml'), 'utf8')).toBe(base);
    expect((await m.apply(next, 'AUTO')).mode).toBe('REBOOT');
    expect(reboots).toHaveLength(1);
    expect(m.persisted()).toBe(next);
  });

  it('refuses an invalid configuration and leaves everything as it was', async () => {
    const { m, activated } = manager();
    await m.adopt(base, true);
    const err = await m.apply(base.replace('hostname: a', 'hostname: bad'), 'NO_REBOOT').catch((e) => e);
    expect(err).toBeInstanceOf(ConfigRejected);
    expect(err.errors).toEqual(['machine.network.hostname: bad']);
    expect(activated).toEqual([base]);
    expect(m.persisted()).toBe(base);
    expect(fs.readdirSync(dir)).toEqual(['config.yaml']);
  });

  it('dry run changes nothing and reports the diff', async () => {
    const { m, activated } = manager();
    await m.adopt(base, true);
    const r = await m.apply(base.replace('hostname: a', 'hostname: b'), 'NO_REBOOT', { dryRun: true });
    expect(r.details).toMatch(/Dry run/);
    expect(r.diff).toMatch(/\+    hostname: b/);
    expect(activated).toEqual([base]);
    expect(m.persisted()).toBe(base);
  });

  it('staged persists for the next boot without activating', async () => {
    const { m, activated } = manager();
    await m.adopt(base, true);
    const next = base.replace('clusterName: c', 'clusterName: s');
    expect((await m.apply(next, 'STAGED')).mode).toBe('STAGED');
    expect(activated).toEqual([base]);
    expect(m.persisted()).toBe(next);
  });

  it('try mode rolls back after the timeout unless confirmed', async () => {
    const { m, activated } = manager();
    await m.adopt(base, true);
    const tried = base.replace('hostname: a', 'hostname: t');
    await m.apply(tried, 'TRY', { tryTimeoutMs: 150 });
    expect(m.current).toBe(tried);
    expect(m.persisted()).toBe(base);
    await new Promise((r) => setTimeout(r, 400));
    expect(m.current).toBe(base);
    expect(activated.at(-1)).toBe(base);
    // confirmed: applying it in no-reboot mode keeps it
    await m.apply(tried, 'TRY', { tryTimeoutMs: 150 });
    await m.apply(tried, 'NO_REBOOT');
    await new Promise((r) => setTimeout(r, 400));
    expect(m.current).toBe(tried);
    expect(m.persisted()).toBe(tried);
  });
});
