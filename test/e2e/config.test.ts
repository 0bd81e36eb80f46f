// End-to-end: a node booted without a configuration waits in maintenance mode; `apply-config
// --insecure` brings it up; the reader API (version, get disks, dmesg) works insecurely only in
// maintenance, and never shows the machine config; a live patch
// of the hostname and a sysctl shows in `get hostname` and `read /proc/sys/...` without a
// reboot; an invalid patch is refused with its errors and changes nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { bronzectl, bronzectlUntilOk } from '../lib/bronzectl.ts';
import { consoleFile } from '../lib/console-log.ts';
import { freePort } from '../lib/ports.ts';

const BOOT = 300_000;

describe('configuration: maintenance mode, apply, live patches', () => {
  let vm: QemuVM;
  let dir: string;
  let config: string;
  let target: string;
  let cpFile: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-config-e2e-'));
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'cfg', endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets });
    cpFile = path.join(dir, 'controlplane.yaml');
    fs.writeFileSync(cpFile, cfg.controlplane);
    const port = await freePort();
    target = `127.0.0.1:${port}`;
    config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'cfg', endpoints: [target], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
    vm = new QemuVM({ apiPort: port, append: 'ip=dhcp' }, consoleFile('config')).start();
    await vm.waitFor(/machined\[1\]: maintenance mode: no machine configuration/, BOOT);
    await vm.waitFor(/machined\[1\]: all 6 services Running/, BOOT);
  }, BOOT + 60_000);

  afterAll(() => {
    vm?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers the reader API insecurely in maintenance mode, shows no configuration, and refuses the rest as Talos does', async () => {
    const g = await bronzectlUntilOk(['get', 'resourcedefinitions', '--insecure', '-n', target], { timeoutMs: 120_000 });
    expect(g.code, g.stderr).toBe(0);
    // What a newcomer types first (Talos's maintenance_basic calls Version on every maintenance node).
    const v = await bronzectl(['version', '--insecure', '-n', target]);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/Server:\n\tNODE: +\S+\n\tTag: +\S+/);
    const disks = await bronzectl(['get', 'disks', '--insecure', '-n', target]);
    expect(disks.code, disks.stderr).toBe(0);
    expect(disks.stderr).toBe('');
    const dmesg = await bronzectl(['dmesg', '--insecure', '-n', target]);
    expect(dmesg.code, dmesg.stderr).toBe(0);
    expect(dmesg.stdout).toMatch(/^\S+: [\w-]+: +\w+: \[[^\]]+\]: /m); // facility: level: [time]: message, per line
    // Nothing sensitive: the machine config is for os:admin only, and a maintenance caller is os:reader.
    const mc = await bronzectl(['get', 'machineconfig', '--insecure', '-n', target]);
    expect(mc.code).not.toBe(0);
    expect(mc.stderr).toMatch(/code = PermissionDenied desc = resources of type MachineConfigs\.config\.talos\.dev are only shown to os:admin/);
    const reboot = await bronzectl(['--bronzeconfig', '/nonexistent', 'reboot', '-e', target], {});
    expect(reboot.code).not.toBe(0);
  });

  it('takes its configuration from apply-config --insecure and leaves maintenance mode', async () => {
    const before = vm.lines.length;
    const r = await bronzectl(['apply-config', '--insecure', '-n', target, '-f', cpFile]);
    expect(r.code, r.stderr).toBe(0);
    await vm.waitFor(/left maintenance mode/, 60_000, before);
    const v = await bronzectlUntilOk(['version'], { config, timeoutMs: 60_000 });
    expect(v.stdout).toMatch(/Server:/);
    // insecure access is over
    const insecure = await bronzectl(['version', '--insecure', '-n', target]);
    expect(insecure.code).not.toBe(0);
  });

  it('applies a hostname and a sysctl live, without a reboot', async () => {
    const before = vm.lines.length;
    const patch = JSON.stringify({ machine: { network: { hostname: 'patched-node' }, sysctls: { 'net.ipv4.ip_forward': '1' } } });
    const r = await bronzectl(['patch', 'machineconfig', '--mode', 'no-reboot', '--patch', patch], { config });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    // Applied by controllers and networkd as they see the new configuration: eventually, not at once.
    const eventually = async (args: string[], ok: (out: string) => boolean) => {
      let out = '';
      for (let i = 0; i < 30 && !ok(out); i++) {
        if (i) await new Promise((r) => setTimeout(r, 1000));
        out = (await bronzectl(args, { config })).stdout;
      }
      return out;
    };
    expect(await eventually(['get', 'hostname'], (o) => /patched-node/.test(o))).toMatch(/patched-node/);
    expect((await eventually(['read', '/proc/sys/net/ipv4/ip_forward'], (o) => o.trim() === '1')).trim()).toBe('1');
    expect(vm.lines.slice(before).some((l) => /machined\[1\]: rebooting/.test(l))).toBe(false);
  });

  it('refuses an invalid patch with its errors and changes nothing', async () => {
    const r = await bronzectl(['patch', 'machineconfig', '--mode', 'no-reboot', '--patch', JSON.stringify({ machine: { network: { hostname: '-not a hostname-' } } })], { config });
    expect(r.code).not.toBe(0);
    expect(r.stderr + r.stdout).toMatch(/hostname/);
    const h = await bronzectl(['get', 'hostname'], { config });
    expect(h.stdout).toMatch(/patched-node/);
  });
});
