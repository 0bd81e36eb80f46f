import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { certFingerprint, readSecurityState, x509InSignatureLists } from './security-state.ts';

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

describe('the UKI signing key from the firmware\'s db', () => {
  it('is the one X.509 certificate db holds, in Talos\'s fingerprint format, read from real EFI signature lists', () => {
    const dir = tree({});
    execFileSync('openssl', ['req', '-new', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '1', '-subj', '/CN=db/', '-keyout', `${dir}/db.key`, '-out', `${dir}/db.crt`], { stdio: 'pipe' });
    execFileSync('cert-to-efi-sig-list', ['-g', '11111111-2222-3333-4444-555555555555', `${dir}/db.crt`, `${dir}/db.esl`], { stdio: 'pipe' });
    const want = /Fingerprint=([0-9A-F:]+)/.exec(execFileSync('openssl', ['x509', '-in', `${dir}/db.crt`, '-noout', '-fingerprint', '-sha256'], { encoding: 'utf8' }))![1];
    const esl = fs.readFileSync(`${dir}/db.esl`);
    expect(x509InSignatureLists(esl).map(certFingerprint)).toEqual([want]);
    const vars = 'sys/firmware/efi/efivars';
    const files = (db: Buffer) => ({
      [`${vars}/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c`]: Buffer.from([6, 0, 0, 0, 1]),
      [`${vars}/SetupMode-8be4df61-93ca-11d2-aa0d-00e098032b8c`]: Buffer.from([6, 0, 0, 0, 0]),
      [`${vars}/StubInfo-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f`]: Buffer.from([6, 0, 0, 0, 0x73, 0]),
      [`${vars}/db-d719b2cb-3d3a-4596-a3bc-dad00e67656f`]: Buffer.concat([Buffer.from([0x27, 0, 0, 0]), db]),
    });
    for (const [f, c] of Object.entries(files(esl))) {
      fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      fs.writeFileSync(path.join(dir, f), c);
    }
    expect(readSecurityState(dir)).toMatchObject({ secureBoot: true, bootedWithUKI: true, ukiSigningKeyFingerprint: want });
    // Two certificates: which one signed is not known, so none is named.
    fs.writeFileSync(path.join(dir, `${vars}/db-d719b2cb-3d3a-4596-a3bc-dad00e67656f`), files(Buffer.concat([esl, esl]))[`${vars}/db-d719b2cb-3d3a-4596-a3bc-dad00e67656f`]!);
    expect(readSecurityState(dir).ukiSigningKeyFingerprint).toBeUndefined();
    expect(() => x509InSignatureLists(esl.subarray(0, 40))).toThrow(/sizes do not add up/);
  });
});
