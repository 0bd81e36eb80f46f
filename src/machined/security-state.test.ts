import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSecurityState } from './security-state.ts';

let root: string | undefined;
const tree = (files: Record<string, string | Buffer>) => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'secstate-'));
  for (const [f, c] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    fs.writeFileSync(path.join(root, f), c);
  }
  return root;
};
afterEach(() => root && fs.rmSync(root, { recursive: true, force: true }));

describe('readSecurityState', () => {
  it('a BIOS boot of a kernel without SELinux, FIPS or modules: only what is known', () => {
    expect(readSecurityState(tree({}))).toEqual({ secureBoot: false, bootedWithUKI: false, selinuxState: 'disabled' });
  });

  it('UEFI with Secure Boot on, a UKI, SELinux enforcing, FIPS and module signatures', () => {
    const r = tree({
      'sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c': Buffer.from([6, 0, 0, 0, 1]),
      'sys/firmware/efi/efivars/StubInfo-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f': Buffer.from([6, 0, 0, 0, 0x73, 0]),
      'sys/fs/selinux/enforce': '1\n',
      'proc/sys/crypto/fips_enabled': '1\n',
      'sys/module/module/parameters/sig_enforce': 'Y\n',
    });
    expect(readSecurityState(r)).toEqual({ secureBoot: true, bootedWithUKI: true, selinuxState: 'enabled, enforcing', fipsState: 'enabled', moduleSignatureEnforced: true });
  });

  it('setup mode (no PK): nothing is enforced, whatever SecureBoot says', () => {
    const r = tree({
      'sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c': Buffer.from([6, 0, 0, 0, 1]),
      'sys/firmware/efi/efivars/SetupMode-8be4df61-93ca-11d2-aa0d-00e098032b8c': Buffer.from([6, 0, 0, 0, 1]),
    });
    expect(readSecurityState(r).secureBoot).toBe(false);
  });

  it('UEFI with Secure Boot off', () => {
    expect(readSecurityState(tree({ 'sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c': Buffer.from([6, 0, 0, 0, 0]) })).secureBoot).toBe(false);
  });
});
