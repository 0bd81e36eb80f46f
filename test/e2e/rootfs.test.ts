// The root filesystem: what is in it (the binary, its libraries, no shell, no coreutils) and
// that it is reproducible: rebuilding bundle → single executable → squashfs from the same
// sources gives byte-identical files.
import { execFile, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { seaBlobRange } from '../../src/lib/sea-blob.ts';
import { HostNode } from '../lib/nodes.ts';
import { freePort } from '../lib/ports.ts';

const SQSH = '_out/amd64/rootfs.sqsh';
// The rebuild takes a minute or more: run without blocking the worker, whose reports to vitest
// time out after 60 s of a blocked event loop.
const run = (cmd: string, args: string[]) => promisify(execFile)(cmd, args, { maxBuffer: 64 << 20 });
const sha256 = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

/** Every path in the image, from rdsquashfs's pack-file style description. */
function listing(image: string): string[] {
  const text = execFileSync('rdsquashfs', ['-d', image], { encoding: 'utf8', maxBuffer: 16 << 20 });
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => '/' + line.split(' ')[1]!);
}

describe('rootfs.sqsh', () => {
  it('holds the binary and its names, its libraries, and no shell or coreutils', () => {
    const files = listing(SQSH);
    for (const f of ['/sbin/init', '/sbin/machined', '/sbin/apid', '/sbin/trustd', '/sbin/networkd', '/sbin/timed', '/sbin/udevd',
      '/etc/os-release', '/etc/ssl/certs/ca-certificates.crt', '/lib64/ld-linux-x86-64.so.2', '/lib/x86_64-linux-gnu/libc.so.6', '/lib/x86_64-linux-gnu/libstdc++.so.6',
      '/usr/sbin/mkfs.xfs', '/usr/sbin/xfs_repair', '/usr/sbin/etcd'])
      expect(files, f).toContain(f);
    const forbidden = /^(sh|bash|dash|ash|busybox|toybox|ls|cat|cp|mv|rm|mkdir|echo|env|chmod|chown|ln|coreutils|login|su|sudo|ssh|sshd)$/;
    const bad = files.filter((f) => forbidden.test(path.posix.basename(f)));
    expect(bad, 'shells or coreutils in the image').toEqual([]);
    // /usr/bin holds containerd, its runc shim and runc (Talos's place for them), nothing else.
    const containerRuntime = ['/usr/bin', '/usr/bin/containerd', '/usr/bin/containerd-shim-runc-v2', '/usr/bin/runc'];
    expect(files.filter((f) => f.startsWith('/bin') || (f.startsWith('/usr/bin') && !containerRuntime.includes(f))), 'no /bin, and only the container runtime in /usr/bin').toEqual([]);
    for (const f of containerRuntime) expect(files, f).toContain(f);
    const described = execFileSync('rdsquashfs', ['-d', SQSH], { encoding: 'utf8' });
    expect(described).toMatch(/^slink etc\/resolv\.conf 0777 0 0 \/system\/etc\/resolv\.conf$/m);
    expect(described).toMatch(/^slink etc\/hosts 0777 0 0 \/system\/etc\/hosts$/m);
  });

  it('is byte-identical when rebuilt from the same inputs', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-repro-'));
    try {
      await run('image-builder/bundle.sh', ['--roles', `${tmp}/roles`]);
      expect(fs.readFileSync(`${tmp}/roles/SHA256SUMS`, 'utf8')).toBe(fs.readFileSync('_out/build/roles/SHA256SUMS', 'utf8'));
      // The code caches (made inside sea.sh) are part of the binary: it is byte-identical only if they are.
      await run('image-builder/sea.sh', ['amd64', `${tmp}/roles`, `${tmp}/bronze`]);
      expect(sha256(`${tmp}/bronze`)).toBe(sha256('_out/build/amd64/bronze'));
      await run('image-builder/rootfs.sh', ['amd64', `${tmp}/bronze`, `${tmp}/rootfs.sqsh`]);
      // With its dm-verity hash tree (reproducible salt): the same file and the same root hash.
      await run('image-builder/verity.sh', [`${tmp}/rootfs.sqsh`, `${tmp}/roothash`]);
      expect(sha256(`${tmp}/rootfs.sqsh`)).toBe(sha256(SQSH));
      expect(fs.readFileSync(`${tmp}/roothash`, 'utf8')).toBe(fs.readFileSync('_out/amd64/roothash', 'utf8'));
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }, 600_000);
});

describe('role bundles', () => {
  it("carry zod's English messages and none of its other locales (image-builder/bundle.ts)", () => {
    const machined = fs.readFileSync('_out/build/roles/machined.cjs', 'utf8');
    expect(machined).toContain('Too small: expected'); // zod/v4/locales/en.js
    expect(machined).not.toMatch(/Trop petit|Zu klein|Demasiado/); // fr.js, de.js, es.js
  });
});

describe('the single executable', () => {
  it("gives back the SEA blob's pages in the roles that load koffi, once loaded (src/lib/sea-blob.ts)", async () => {
    const binary = '_out/build/amd64/bronze';
    // The program headers from the file (the binary is a fixed-address executable: no load bias).
    const file = fs.readFileSync(binary);
    const phoff = Number(file.readBigUInt64LE(32));
    const table = file.subarray(phoff, phoff + file.readUInt16LE(54) * file.readUInt16LE(56));
    const entries = Array.from({ length: table.length / 56 }, (_, i) => table.subarray(i * 56, (i + 1) * 56));
    const phdr = entries.find((e) => e.readUInt32LE(0) === 6); // PT_PHDR: where the table itself is loaded
    const blob = phdr && seaBlobRange(table, Number(phdr.readBigUInt64LE(16)));
    expect(blob, 'the blob postject added').toBeDefined();
    const node = new HostNode({ name: 'sea-blob', address: '127.0.0.1', apiPort: await freePort(), services: ['apid', 'udevd'], binary }).start();
    try {
      await node.waitFor(/all 2 services Running/, 60_000);
      const pids = new Map<string, number>([['machined', node.proc!.pid!]]);
      for (const pid of execFileSync('pgrep', ['-P', String(node.proc!.pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number)) {
        pids.set(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!, pid);
      }
      // The blob's mapping in /proc/<pid>/smaps, and the kB of it in memory.
      const resident = (pid: number) => {
        const mapping = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/).find((m) => parseInt(m, 16) === blob!.start);
        return Number(/\nRss:\s+(\d+) kB/.exec(mapping ?? '')?.[1] ?? NaN);
      };
      expect(resident(pids.get('machined')!)).toBe(0);
      expect(resident(pids.get('udevd')!)).toBe(0);
      // apid does not load koffi: it keeps what it read (so the measure above sees pages when there are some).
      expect(resident(pids.get('apid')!)).toBeGreaterThan(0);
    } finally {
      await node.stop();
    }
  });
});

describe('signed checksums', () => {
  // Asynchronously: hashing every artifact takes a minute on a slow machine, and a worker that
  // blocks that long misses vitest's 60 s RPC deadline ("Timeout calling onTaskUpdate"), which
  // fails the whole run and drops the files after it.
  it('verify, and a changed checksum list is refused', async () => {
    await run('image-builder/verify.sh', ['_out']);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-sig-'));
    try {
      for (const f of ['SHA256SUMS', 'SHA256SUMS.sig', 'signing-key.pub']) fs.copyFileSync(`_out/${f}`, `${tmp}/${f}`);
      const sums = fs.readFileSync(`${tmp}/SHA256SUMS`, 'utf8');
      fs.writeFileSync(`${tmp}/SHA256SUMS`, sums.replace(/^[0-9a-f]/, (c) => (c === '0' ? '1' : '0')));
      await expect(run('image-builder/verify.sh', [tmp])).rejects.toThrow(/BAD signature/);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('bronzectl for operators', () => {
  it('is built as its own single executable and runs without Node installed', () => {
    const out = execFileSync('_out/amd64/bronzectl', ['version', '--client'], { encoding: 'utf8', env: { PATH: '/nonexistent', HOME: os.tmpdir() } });
    expect(out).toMatch(/Client:/);
    expect(out).toMatch(/Tag:\s+v\d/);
  });
});
