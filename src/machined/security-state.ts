// SecurityStates.talos.dev, id 'securitystate': what the firmware and the kernel say about how
// the node booted, read from them (under `root`, '/' on a node). A fact the system does not
// expose is left out, never guessed:
// - secureBoot: the EFI variable SecureBoot, unless the firmware is in setup mode (SetupMode 1:
//   no PK, nothing enforced), as Talos reads it; false when the node did not boot through UEFI;
// - bootedWithUKI: whether systemd-stub (a unified kernel image) left its StubInfo variable;
// - selinuxState: /sys/fs/selinux/enforce ('disabled' without it: Bronze's kernel has no SELinux);
// - fipsState: /proc/sys/crypto/fips_enabled, when the kernel has it;
// - moduleSignatureEnforced: /sys/module/module/parameters/sig_enforce, when the kernel has it
//   (Bronze's kernel has no loadable modules at all, so it does not).
import fs from 'node:fs';
import path from 'node:path';
import type { SecurityStateSpec } from '../contract/resources/security-state.ts';

const EFI_GLOBAL = '8be4df61-93ca-11d2-aa0d-00e098032b8c';
const SYSTEMD_STUB = '4a67b082-0a4c-41cf-b6c7-440b29bb8c4f';

function read(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

export function readSecurityState(root = '/'): SecurityStateSpec {
  const efivars = path.join(root, 'sys/firmware/efi/efivars');
  // An efivarfs file is 4 bytes of attributes, then the value.
  const flag = (name: string) => {
    const v = read(path.join(efivars, `${name}-${EFI_GLOBAL}`));
    return v !== undefined && v.length >= 5 && v[4] === 1;
  };
  const spec: SecurityStateSpec = { secureBoot: flag('SecureBoot') && !flag('SetupMode') };
  spec.bootedWithUKI = fs.existsSync(path.join(efivars, `StubInfo-${SYSTEMD_STUB}`));
  const enforce = read(path.join(root, 'sys/fs/selinux/enforce'))?.toString().trim();
  spec.selinuxState = enforce === undefined ? 'disabled' : enforce === '1' ? 'enabled, enforcing' : 'enabled, permissive';
  const fips = read(path.join(root, 'proc/sys/crypto/fips_enabled'))?.toString().trim();
  if (fips !== undefined) spec.fipsState = fips === '1' ? 'enabled' : 'disabled';
  const sig = read(path.join(root, 'sys/module/module/parameters/sig_enforce'))?.toString().trim();
  if (sig !== undefined) spec.moduleSignatureEnforced = sig === 'Y';
  return spec;
}
