// qemu.ts without QEMU: what `make run` boots from its flags (a named disk persists and is
// made blank when missing; the image's own disk.raw runs on an overlay), and `make stop`
// pressing the power button of the node on the port it names, through that node's own
// monitor socket (issue 17: one shared socket could not tell two nodes apart).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OOM_LINE, defaultMonitorSocket, nodeUuid, parseSize, qemuCommand, runBoot } from './qemu.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-qemu-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the node running out of memory, and a container its own limit', () => {
  it('fails a boot on the first, not on a kill inside a container\'s memory cgroup', () => {
    expect(OOM_LINE.test('[   12.1] Out of memory: Killed process 312 (apid) total-vm:1000kB')).toBe(true);
    expect(OOM_LINE.test('[   12.1] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/')).toBe(true);
    expect(OOM_LINE.test('[   12.1] Memory cgroup out of memory: Killed process 99 (sh)')).toBe(false);
    expect(OOM_LINE.test('[   12.1] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=hog')).toBe(false);
    expect(OOM_LINE.test('[   12.1] sh invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0')).toBe(false);
  });
  it('forwards more ports to the node when asked', () => {
    const iso = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-fwd-')), 'bronze.iso');
    fs.writeFileSync(iso, '');
    const c = qemuCommand({ apiPort: 50123, forwards: [{ host: 18080, guest: 8080 }], boot: { kind: 'iso', path: iso } });
    fs.rmSync(path.dirname(iso), { recursive: true });
    expect(c.args.join(' ')).toMatch(/hostfwd=tcp:127\.0\.0\.1:50123-:50000,hostfwd=tcp:127\.0\.0\.1:18080-:8080/);
  });
});

describe('make run: what boots', () => {
  it('a named disk that does not exist is made blank and sparse, boots with the ISO, and persists', () => {
    const disk = path.join(dir, 'node1.raw');
    const { boot, drives } = runBoot({ disk }, 'amd64', path.join(dir, '_out'));
    expect(fs.statSync(disk).size).toBe(6 * 1024 ** 3);
    expect(fs.statSync(disk).blocks).toBe(0);
    expect(boot).toEqual({ kind: 'iso', path: path.join(dir, '_out', 'amd64', 'bronze.iso') });
    expect(drives).toEqual([`file=${disk},format=raw,if=none,id=disk0`]);
    expect(drives[0]).not.toMatch(/snapshot/);
    // The next run keeps it; SNAPSHOT=1 throws the writes away; MEDIA=none boots it alone.
    expect(runBoot({ disk, snapshot: 'true' }, 'amd64', path.join(dir, '_out')).drives[0]).toMatch(/,snapshot=on$/);
    expect(runBoot({ disk, 'no-media': 'true' }, 'amd64', path.join(dir, '_out')).boot).toEqual({ kind: 'disk', path: disk, snapshot: false });
    expect(() => runBoot({ disk, 'disk-size': '2G' }, 'amd64', path.join(dir, '_out'))).toThrow(/exists already/);
  });

  it('the image\'s own disk.raw runs on an overlay (a signed artifact)', () => {
    fs.mkdirSync(path.join(dir, '_out', 'amd64'), { recursive: true });
    const art = path.join(dir, '_out', 'amd64', 'disk.raw');
    fs.writeFileSync(art, '');
    expect(runBoot({ disk: art, 'no-media': 'true' }, 'amd64', path.join(dir, '_out')).boot).toMatchObject({ kind: 'disk', snapshot: true });
  });

  it('sizes and UUIDs', () => {
    expect(parseSize('6G')).toBe(6 * 1024 ** 3);
    expect(parseSize('4096M')).toBe(4 * 1024 ** 3);
    expect(() => parseSize('lots')).toThrow(/disk size "lots"/);
    expect(nodeUuid('disk:/a')).toBe(nodeUuid('disk:/a'));
    expect(nodeUuid('disk:/a')).not.toBe(nodeUuid('disk:/b'));
    expect(nodeUuid('port:50000')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('each node has its own monitor socket, by API port', () => {
    expect(defaultMonitorSocket('_out', 'amd64', 50001)).toBe('_out/amd64/qemu-monitor-50001.sock');
    fs.mkdirSync(path.join(dir, 'amd64'), { recursive: true });
    for (const f of ['vmlinuz', 'initramfs.xz', 'cmdline']) fs.writeFileSync(path.join(dir, 'amd64', f), 'x');
    fs.writeFileSync(path.join(dir, 'amd64', 'roothash'), `${'ab'.repeat(32)}\n`);
    const a = qemuCommand({ outDir: dir, apiPort: 50001, uuid: nodeUuid('port:50001') });
    const b = qemuCommand({ outDir: dir, apiPort: 50002 });
    expect(a.monitor).not.toBe(b.monitor);
    expect(a.args).toContain(`unix:${a.monitor},server,nowait`);
    expect(a.args.join(' ')).toMatch(/-uuid [0-9a-f-]{36}/);
    // The direct kernel boot carries the rootfs's dm-verity root hash on its command line.
    expect(a.args[a.args.indexOf('-append') + 1]).toContain(`bronze.roothash=${'ab'.repeat(32)}`);
    // The console: QEMU's stdout for `make run`, a file for a VM whose console a test reads.
    expect(a.args[a.args.indexOf('-serial') + 1]).toBe('stdio');
    const f = qemuCommand({ outDir: dir, apiPort: 50003, serialFile: path.join(dir, 'console.log') });
    expect(f.args[f.args.indexOf('-serial') + 1]).toBe(`file:${path.join(dir, 'console.log')}`);
  });
});

describe('arm64 under QEMU: virt with -cpu max; a kernel boot has no firmware, the others AAVMF', () => {
  const out = () => path.join(dir, '_out');
  beforeEach(() => {
    const a = path.join(out(), 'arm64');
    fs.mkdirSync(a, { recursive: true });
    for (const f of ['vmlinuz', 'initramfs.xz', 'bronze.iso', 'disk.raw']) fs.writeFileSync(path.join(a, f), '');
    fs.writeFileSync(path.join(a, 'cmdline'), 'console=ttyAMA0,115200 init_on_alloc=1\n');
    fs.writeFileSync(path.join(a, 'roothash'), `${'cd'.repeat(32)}\n`);
  });
  const flag = (args: string[], name: string) => args.filter((_, i) => args[i - 1] === name);

  it('a kernel boot: qemu-system-aarch64 on virt, no pflash, the arm64 command line', () => {
    const c = qemuCommand({ arch: 'arm64', outDir: out(), apiPort: 50123 });
    expect(c.bin).toBe('qemu-system-aarch64');
    expect(flag(c.args, '-machine')).toEqual(['virt,accel=tcg']);
    expect(flag(c.args, '-cpu')[0]).toMatch(/^max\b/);
    expect(c.args.join(' ')).not.toMatch(/pflash/);
    expect(flag(c.args, '-kernel')).toEqual([path.join(out(), 'arm64', 'vmlinuz')]);
    expect(flag(c.args, '-append')).toEqual([`console=ttyAMA0,115200 init_on_alloc=1 bronze.roothash=${'cd'.repeat(32)}`]);
    // The full command line (_out/<arch>/cmdline since issue 49) has a root hash: still one, the roothash file's.
    fs.writeFileSync(path.join(out(), 'arm64', 'cmdline'), `console=ttyAMA0,115200 bronze.roothash=${'ef'.repeat(32)} init_on_alloc=1\n`);
    expect(flag(qemuCommand({ arch: 'arm64', outDir: out(), apiPort: 50124 }).args, '-append')).toEqual([`console=ttyAMA0,115200 init_on_alloc=1 bronze.roothash=${'cd'.repeat(32)}`]);
    expect(c.monitor).toBe(path.join(out(), 'arm64', 'qemu-monitor-50123.sock'));
    expect(c.tempDir).toBeUndefined();
  });

  it('disk and ISO boots go through AAVMF (a private copy of its variable store); the ISO on a SCSI CD', () => {
    const disk = qemuCommand({ arch: 'arm64', outDir: out(), boot: { kind: 'disk', path: path.join(out(), 'arm64', 'disk.raw'), snapshot: true } });
    try {
      const pflash = flag(disk.args, '-drive').filter((d) => d.startsWith('if=pflash'));
      expect(pflash[0]).toMatch(/readonly=on,file=\/usr\/share\/AAVMF\/AAVMF_CODE\.fd$/);
      expect(pflash[1]).toContain(disk.tempDir!);
      expect(flag(disk.args, '-drive')).toContainEqual(expect.stringMatching(/id=disk0,.*snapshot=on$/));
    } finally {
      fs.rmSync(disk.tempDir!, { recursive: true, force: true });
    }
    const iso = qemuCommand({ arch: 'arm64', outDir: out(), boot: { kind: 'iso', path: path.join(out(), 'arm64', 'bronze.iso') } });
    fs.rmSync(iso.tempDir!, { recursive: true, force: true });
    expect(flag(iso.args, '-device')).toContainEqual(expect.stringMatching(/^scsi-cd,drive=cd0/));
  });

  it('refuses what arm64 does not have: BIOS, and PXE from the x86 iPXE ROMs', () => {
    expect(() => qemuCommand({ arch: 'arm64', outDir: out(), boot: { kind: 'disk', path: path.join(out(), 'arm64', 'disk.raw') }, firmware: 'bios' })).toThrow(/arm64 has no BIOS/);
    expect(() => qemuCommand({ arch: 'arm64', outDir: out(), boot: { kind: 'pxe', tftpDir: out(), bootfile: 'boot.ipxe' } })).toThrow(/PXE boots are amd64's/);
  });

  it('make run ARCH=arm64 DISK=...: the ISO of arm64 with the disk', () => {
    const disk = path.join(dir, 'node.raw');
    expect(runBoot({ disk }, 'arm64', out()).boot).toEqual({ kind: 'iso', path: path.join(out(), 'arm64', 'bronze.iso') });
  });
});

describe('make stop: the node on the port named', () => {
  /** A fake QEMU human monitor: a banner with a prompt, then it records what it is sent. */
  function fakeMonitor(socket: string): { got: string[]; close: () => void } {
    const got: string[] = [];
    const server = net.createServer((c) => {
      c.write('QEMU 7.2.0 monitor - type \'help\' for more information\r\n(qemu) ');
      c.on('data', (d) => got.push(...d.toString().split('\n').filter(Boolean)));
    });
    server.listen(socket);
    return { got, close: () => server.close() };
  }
  const stop = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const p = spawn(path.resolve('node_modules/.bin/tsx'), [path.resolve('image-builder/qemu.ts'), 'stop', ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      p.stderr.on('data', (d) => (stderr += d));
      p.on('exit', (code) => resolve({ code, stderr }));
    });

  it('presses the power button of that node only, and names the running ones otherwise', async () => {
    fs.mkdirSync(path.join(dir, '_out', 'amd64'), { recursive: true });
    const one = fakeMonitor(path.join(dir, defaultMonitorSocket('_out', 'amd64', 50001)));
    const two = fakeMonitor(path.join(dir, defaultMonitorSocket('_out', 'amd64', 50002)));
    try {
      const r = await stop(['--port', '50002']);
      expect(r, r.stderr).toMatchObject({ code: 0 });
      expect(r.stderr).toMatch(/power button pressed on the node with API port 50002/);
      expect(two.got).toEqual(['system_powerdown']);
      expect(one.got).toEqual([]);
      const none = await stop([]);
      expect(none.code).toBe(1);
      expect(none.stderr).toMatch(/no node runs with API port 50000 .*; running: PORT=50001, PORT=50002/);
    } finally {
      one.close();
      two.close();
    }
  }, 30_000);
});
