// End-to-end: the real image under QEMU, configured at boot from a URL (the guest fetches it
// from a server on the host's loopback through QEMU's user network), driven from the host with
// bronzectl over mTLS through the forwarded API port: version, services, logs machined,
// memory, get services, reboot (the node comes back), shutdown (the VM powers off).
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
import { serveFiles, type FileServer } from '../lib/http-files.ts';
import { freePort } from '../lib/ports.ts';

const BOOT = 300_000;

describe('a node driven by bronzectl', () => {
  let vm: QemuVM;
  let files: FileServer;
  let dir: string;
  let config: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-api-e2e-'));
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'e2e', endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets });
    files = await serveFiles({ '/controlplane.yaml': cfg.controlplane });
    const port = await freePort();
    config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'e2e', endpoints: [`127.0.0.1:${port}`], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
    vm = new QemuVM(
      { apiPort: port, append: `ip=dhcp bronze.config=http://10.0.2.2:${files.port}/controlplane.yaml` },
      consoleFile('api'),
    ).start();
    await vm.waitFor(/machined\[1\]: all 5 services Running/, BOOT);
  }, BOOT + 60_000);

  afterAll(async () => {
    vm?.kill();
    await files?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('fetched its configuration from the URL', () => {
    expect(files.requests).toContain('/controlplane.yaml');
    expect(vm.lines.some((l) => /configuration from http:\/\/10\.0\.2\.2:\d+\/controlplane\.yaml: controlplane of cluster e2e/.test(l))).toBe(true);
  });

  it('answers version with the node\'s build', async () => {
    const r = await bronzectlUntilOk(['version'], { config, timeoutMs: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/Client:/);
    expect(r.stdout).toMatch(/Server:/);
    expect(r.stdout).toMatch(/Tag:\s+v\d+\.\d+\.\d+/);
  });

  it('lists the services, all running', async () => {
    const r = await bronzectl(['services'], { config });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^NODE\s+SERVICE\s+STATE\s+HEALTH/);
    for (const s of ['apid', 'trustd', 'networkd', 'timed', 'udevd']) expect(r.stdout).toMatch(new RegExp(`\\b${s}\\s+Running\\s+OK`));
  });

  it('shows machined\'s log', async () => {
    const r = await bronzectl(['logs', 'machined'], { config });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/starting as PID 1/);
    expect(r.stdout).toMatch(/service apid: Running/);
  });

  it('reports memory', async () => {
    const r = await bronzectl(['memory'], { config });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^NODE\s+TOTAL\s+USED\s+FREE/);
    expect(r.stdout.split('\n')[1]).toMatch(/\d+/);
  });

  it('gets the services resources', async () => {
    const r = await bronzectl(['get', 'services'], { config });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/apid\s+\d+\s+true\s+true/);
  });

  it('reboots, and the node comes back', async () => {
    const before = vm.lines.length;
    const r = await bronzectl(['reboot'], { config });
    expect(r.code, r.stderr).toBe(0);
    await vm.waitFor(/machined\[1\]: rebooting/, 60_000, before);
    const up = await vm.waitFor(/machined\[1\]: all 5 services Running/, BOOT, before);
    expect(up).toBeGreaterThan(before);
    const v = await bronzectlUntilOk(['version'], { config, timeoutMs: 120_000 });
    expect(v.code, v.stderr).toBe(0);
  }, BOOT + 120_000);

  it('shuts down, and the VM powers off', async () => {
    const before = vm.lines.length;
    const r = await bronzectl(['shutdown'], { config });
    expect(r.code, r.stderr).toBe(0);
    await vm.waitFor(/machined\[1\]: powering off/, 60_000, before);
    expect(await vm.waitExit(60_000)).toBe(0);
  }, 180_000);
});
