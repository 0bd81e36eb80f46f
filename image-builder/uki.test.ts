// image-builder/uki.sh: the UKI's sections hold exactly what they should (os-release, the command
// line with the root hash, the kernel, the initramfs), each past the stub's own, and the image
// is signed by the db key and by no other.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const STUB = '/usr/lib/systemd/boot/efi/linuxx64.efi.stub';
const have = fs.existsSync(STUB) && ['sbsign', 'sbverify', 'objcopy'].every((t) => {
  try {
    execFileSync('sh', ['-c', `command -v ${t}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});

describe.skipIf(!have)('uki.sh', () => {
  let dir: string;
  const keyPair = (name: string) =>
    execFileSync('openssl', ['req', '-new', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '1', '-subj', `/CN=${name}/`, '-keyout', path.join(dir, 'keys', `${name}.key`), '-out', path.join(dir, 'keys', `${name}.crt`)], { stdio: 'pipe' });

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-uki-'));
    fs.mkdirSync(path.join(dir, 'keys'));
    fs.mkdirSync(path.join(dir, 'art'));
    keyPair('db');
    keyPair('other');
    for (const f of ['PK.auth', 'KEK.auth', 'db.auth']) fs.writeFileSync(path.join(dir, 'keys', f), 'not read by uki.sh');
    fs.writeFileSync(path.join(dir, 'art', 'vmlinuz'), Buffer.alloc(300_000, 0x4b));
    fs.writeFileSync(path.join(dir, 'art', 'initramfs.xz'), Buffer.alloc(500_001, 0x49));
    fs.writeFileSync(path.join(dir, 'art', 'cmdline'), 'console=ttyS0,115200\nlockdown=confidentiality\n');
    fs.writeFileSync(path.join(dir, 'art', 'roothash'), `${'ab'.repeat(32)}\n`);
    execFileSync('image-builder/uki.sh', ['amd64', path.join(dir, 'art'), path.join(dir, 'bronze.efi')], { env: { ...process.env, BRONZE_SECUREBOOT_KEYS: path.join(dir, 'keys'), BRONZE_VERSION: 'v9.9.9' }, stdio: 'pipe' });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const section = (name: string) => {
    const out = path.join(dir, `${name}.bin`);
    execFileSync('objcopy', ['-O', 'binary', `--only-section=.${name}`, path.join(dir, 'bronze.efi'), out], { stdio: 'pipe' });
    return fs.readFileSync(out);
  };

  it('carries os-release, the command line with the root hash, the kernel and the initramfs', () => {
    expect(section('osrel').toString()).toMatch(/^NAME="Bronze"$/m);
    expect(section('osrel').toString()).toMatch(/^VERSION_ID="v9\.9\.9"$/m);
    expect(section('cmdline').toString()).toBe(`console=ttyS0,115200 lockdown=confidentiality bronze.roothash=${'ab'.repeat(32)}\n`);
    expect(section('linux').equals(fs.readFileSync(path.join(dir, 'art', 'vmlinuz')))).toBe(true);
    expect(section('initrd').equals(fs.readFileSync(path.join(dir, 'art', 'initramfs.xz')))).toBe(true);
  });

  it('places each section after the stub\'s, in order, on 4 KiB boundaries', () => {
    const vmas = (file: string) =>
      Object.fromEntries(
        execFileSync('objdump', ['-h', '-w', file], { encoding: 'utf8' })
          .split('\n')
          .map((l) => l.trim().split(/\s+/))
          .filter((f) => /^\d+$/.test(f[0] ?? ''))
          .map((f) => [f[1]!, { size: parseInt(f[2]!, 16), vma: parseInt(f[3]!, 16) }]),
      );
    const stubEnd = Math.max(...Object.values(vmas(STUB)).map((s) => s.vma + s.size));
    const s = vmas(path.join(dir, 'bronze.efi'));
    let end = stubEnd;
    for (const name of ['.osrel', '.cmdline', '.linux', '.initrd']) {
      expect(s[name]!.vma % 4096, name).toBe(0);
      expect(s[name]!.vma, name).toBeGreaterThanOrEqual(end);
      end = s[name]!.vma + s[name]!.size;
    }
  });

  it('is signed by the db key, not by another', () => {
    execFileSync('sbverify', ['--cert', path.join(dir, 'keys', 'db.crt'), path.join(dir, 'bronze.efi')], { stdio: 'pipe' });
    expect(() => execFileSync('sbverify', ['--cert', path.join(dir, 'keys', 'other.crt'), path.join(dir, 'bronze.efi')], { stdio: 'pipe' })).toThrow();
  });
});
