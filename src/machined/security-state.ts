// SecurityStates.talos.dev, id 'securitystate': what the firmware and the kernel say about how
// the node booted, read from them (under `root`, '/' on a node). A fact the system does not
// expose is left out, never guessed:
// - secureBoot: the EFI variable SecureBoot, unless the firmware is in setup mode (SetupMode 1:
//   no PK, nothing enforced), as Talos reads it; false when the node did not boot through UEFI;
// - bootedWithUKI: whether systemd-stub (a unified kernel image) left its StubInfo variable;
// - ukiSigningKeyFingerprint: with Secure Boot enforced and a UKI booted, the certificate in the
//   firmware's db (EFI signature lists), when it holds exactly one: the firmware ran the UKI only
//   because its signature chains to it. SHA-256 of the DER, upper-case hex pairs joined by ':'
//   (Talos's format). With several, which one signed is not known here, and it is left out;
// - selinuxState: /sys/fs/selinux/enforce ('disabled' without it: Bronze's kernel has no SELinux);
// - fipsState: /proc/sys/crypto/fips_enabled, when the kernel has it;
// - moduleSignatureEnforced: /sys/module/module/parameters/sig_enforce, when the kernel has it
//   (Bronze's kernel has no loadable modules at all, so it does not).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SecurityStateSpec } from '../contract/resources/security-state.ts';

const EFI_GLOBAL = '8be4df61-93ca-11d2-aa0d-00e098032b8c';
const SYSTEMD_STUB = '4a67b082-0a4c-41cf-b6c7-440b29bb8c4f';
const IMAGE_SECURITY_DATABASE = 'd719b2cb-3d3a-4596-a3bc-dad00e67656f';
/** EFI_CERT_X509_GUID (a5c059a1-94e4-4aa7-87b5-ab155c2bf072) as it lies in memory. */
const CERT_X509 = Buffer.from('a159c0a5e494a74a87b5ab155c2bf072', 'hex');

/** The X.509 certificates (DER) in a list of EFI_SIGNATURE_LISTs; throws on one that does not add up. */
export function x509InSignatureLists(data: Buffer): Buffer[] {
  const certs: Buffer[] = [];
  for (let at = 0; at < data.length; ) {
    if (at + 28 > data.length) throw new Error(`EFI signature list at byte ${at}: truncated header`);
    const listSize = data.readUInt32LE(at + 16);
    const headerSize = data.readUInt32LE(at + 20);
    const sigSize = data.readUInt32LE(at + 24);
    if (listSize < 28 + headerSize || at + listSize > data.length || sigSize <= 16) throw new Error(`EFI signature list at byte ${at}: sizes do not add up`);
    if (data.subarray(at, at + 16).equals(CERT_X509)) {
      for (let sig = at + 28 + headerSize; sig + sigSize <= at + listSize; sig += sigSize) certs.push(data.subarray(sig + 16, sig + sigSize));
    }
    at += listSize;
  }
  return certs;
}

/** Talos's certificate fingerprint: SHA-256 of the DER, 'AB:CD:...'. */
export function certFingerprint(der: Buffer): string {
  return createHash('sha256').update(der).digest('hex').toUpperCase().match(/../g)!.join(':');
}

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
  if (spec.secureBoot && spec.bootedWithUKI) {
    const db = read(path.join(efivars, `db-${IMAGE_SECURITY_DATABASE}`));
    try {
      const certs = db && db.length > 4 ? x509InSignatureLists(db.subarray(4)) : [];
      if (certs.length === 1) spec.ukiSigningKeyFingerprint = certFingerprint(certs[0]!);
    } catch {
      // A db this code cannot read names no key; the rest stands.
    }
  }
  const enforce = read(path.join(root, 'sys/fs/selinux/enforce'))?.toString().trim();
  spec.selinuxState = enforce === undefined ? 'disabled' : enforce === '1' ? 'enabled, enforcing' : 'enabled, permissive';
  const fips = read(path.join(root, 'proc/sys/crypto/fips_enabled'))?.toString().trim();
  if (fips !== undefined) spec.fipsState = fips === '1' ? 'enabled' : 'disabled';
  const sig = read(path.join(root, 'sys/module/module/parameters/sig_enforce'))?.toString().trim();
  if (sig !== undefined) spec.moduleSignatureEnforced = sig === 'Y';
  return spec;
}
