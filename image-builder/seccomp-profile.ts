// Debian's default seccomp profile (golang-github-containers-common:
// /usr/share/containers/seccomp.json), read at build time and served as the module
// `bronze:seccomp-profile` by the bundler (image-builder/bundle.ts) and by vitest.config.ts, so
// the node carries the profile Debian ships, not a copy kept in this repository.
// src/containerd/seccomp.ts turns it into a container's OCI seccomp section.
import fs from 'node:fs';

export const DEBIAN_SECCOMP_JSON = '/usr/share/containers/seccomp.json';
export const SECCOMP_PROFILE_MODULE = 'bronze:seccomp-profile';

/** The module's text: the profile as its default export. */
export function seccompProfileModule(file = DEBIAN_SECCOMP_JSON): string {
  if (!fs.existsSync(file)) throw new Error(`${file} is missing (scripts/deps.sh installs golang-github-containers-common)`);
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { syscalls?: unknown };
  if (!Array.isArray(profile.syscalls)) throw new Error(`${file}: no syscalls list: not a seccomp profile`);
  return `export default ${JSON.stringify(profile)};\n`;
}

let cached: string | undefined;
export function seccompProfileModuleOnce(): string {
  return (cached ??= seccompProfileModule());
}
