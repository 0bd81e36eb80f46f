// End-to-end for the host daemons: networkd gets the node's address by DHCP from QEMU's user
// network (no kernel ip=), visible through get addresses/routes/resolvers; a static
// configuration applied live replaces it; timed syncs from a real NTP server (chronyd on the
// host, reached as 10.0.2.2); udevd sees a disk hot-plugged through the QEMU monitor under
// /dev/disk/by-id and in get disks, and sees it go when it is removed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { bronzectl, bronzectlUntilOk, until } from '../lib/bronzectl.ts';
import { startHostChrony, type HostChrony } from '../lib/chrony-host.ts';
import { consoleFile } from '../lib/console-log.ts';
import { freePort } from '../lib/ports.ts';

const BOOT = 300_000;

describe('networkd, timed and udevd on a node', () => {
  let vm: QemuVM;
  let dir: string;
  let config: string;
  let target: string;
  let chrony: HostChrony;
  let cpFile: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-net-e2e-'));
    chrony = await startHostChrony(await freePort());
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'net', endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets });
    cpFile = path.join(dir, 'controlplane.yaml');
    fs.writeFileSync(cpFile, cfg.controlplane.replace(/^  time: \{\}$/m, `  time:\n    servers:\n      - 10.0.2.2:${chrony.port}`));
    const port = await freePort();
    target = `127.0.0.1:${port}`;
    config = path.join(dir, 'bronzeconfig');
    await save(config, await newClientConfig({ contextName: 'net', endpoints: [target], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
    fs.writeFileSync(path.join(dir, 'hotplug.raw'), Buffer.alloc(0));
    fs.truncateSync(path.join(dir, 'hotplug.raw'), 64 * 1024 * 1024);
    vm = new QemuVM({ apiPort: port, extraArgs: ['-device', 'pcie-root-port,id=rp1,chassis=1,slot=1'] }, consoleFile('network')).start();
    await vm.waitFor(/machined\[1\]: all 6 services Running/, BOOT);
  }, BOOT + 60_000);

  afterAll(async () => {
    vm?.kill();
    await chrony?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('gets its address by DHCP from QEMU (read-only calls work insecurely in maintenance mode)', async () => {
    const links = await until('links', () => bronzectl(['get', 'links', '--insecure', '-n', target]), (r) => /\beth0\b/.test(r.stdout), 120_000);
    expect(links.stdout).toMatch(/eth0/);
    const r = await until('DHCP address', () => bronzectl(['get', 'addresses', '--insecure', '-n', target]), (x) => /10\.0\.2\.15\/24/.test(x.stdout), 120_000);
    expect(r.stdout).toMatch(/eth0/);
  });

  it('shows the DHCP lease in addresses, routes and resolvers once configured', async () => {
    const a = await bronzectl(['apply-config', '--insecure', '-n', target, '-f', cpFile]);
    expect(a.code, a.stderr).toBe(0);
    await bronzectlUntilOk(['version'], { config, timeoutMs: 60_000 });
    expect((await bronzectl(['get', 'addresses'], { config })).stdout).toMatch(/10\.0\.2\.15\/24/);
    expect((await bronzectl(['get', 'routes'], { config })).stdout).toMatch(/10\.0\.2\.2\b/);
    expect((await bronzectl(['get', 'resolvers'], { config })).stdout).toMatch(/10\.0\.2\.3/);
  });

  it('syncs its clock from the NTP server reachable from the VM', async () => {
    await until('time sync', () => bronzectl(['get', 'timestatus', '-o', 'yaml'], { config }), (x) => /synced: true/.test(x.stdout), 120_000);
    // TimeStatus has Talos's fields only (synced, epoch, syncDisabled): the server is what `time` asks.
    const t = await bronzectl(['time'], { config });
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toMatch(new RegExp(`\\s10\\.0\\.2\\.2:${chrony.port}\\s+\\d{4}-`));
  });

  it('replaces DHCP with a static configuration applied live', async () => {
    const patch = JSON.stringify({
      machine: {
        network: {
          nameservers: ['10.0.2.3', '9.9.9.9'],
          interfaces: [
            {
              interface: 'eth0',
              dhcp: false,
              addresses: ['10.0.2.15/24', '10.0.2.50/24'],
              routes: [{ network: '0.0.0.0/0', gateway: '10.0.2.2' }],
              vlans: [{ vlanId: 100, addresses: ['192.168.100.2/24'] }],
            },
          ],
        },
      },
    });
    const p = await bronzectl(['patch', 'mc', '--mode', 'no-reboot', '--patch', patch], { config });
    expect(p.code, p.stderr + p.stdout).toBe(0);
    await until('static address', () => bronzectl(['get', 'addresses'], { config }), (x) => /10\.0\.2\.50\/24/.test(x.stdout), 60_000);
    await until('static resolvers', () => bronzectl(['get', 'resolvers'], { config }), (x) => /9\.9\.9\.9/.test(x.stdout), 60_000);
    // A VLAN on eth0, made over rtnetlink by networkd (no traffic leaves the guest).
    await until('VLAN link', () => bronzectl(['get', 'links'], { config }), (x) => /eth0\.100/.test(x.stdout), 60_000);
    await until('VLAN address', () => bronzectl(['get', 'addresses'], { config }), (x) => /192\.168\.100\.2\/24/.test(x.stdout), 60_000);
  });

  it('sees a hot-plugged disk under /dev/disk/by-id and in get disks, and its removal', async () => {
    await vm.monitorCommand(`drive_add 0 if=none,id=hot1,format=raw,file=${path.join(dir, 'hotplug.raw')}`);
    await vm.monitorCommand('device_add virtio-blk-pci,drive=hot1,id=hotdisk,serial=HOTPLUG1,bus=rp1');
    await until('by-id link', () => bronzectl(['list', '/dev/disk/by-id'], { config }), (x) => /virtio-HOTPLUG1/.test(x.stdout), 60_000);
    await until('disk resource', () => bronzectl(['get', 'disks'], { config }), (x) => /HOTPLUG1/.test(x.stdout), 60_000);
    await vm.monitorCommand('device_del hotdisk');
    await until('disk gone', () => bronzectl(['get', 'disks'], { config }), (x) => x.code === 0 && !/HOTPLUG1/.test(x.stdout), 60_000);
    const l = await bronzectl(['list', '/dev/disk/by-id'], { config });
    expect(l.stdout).not.toMatch(/virtio-HOTPLUG1/);
  });
});
