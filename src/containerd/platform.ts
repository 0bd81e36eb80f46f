// The node's platform and the choice of a manifest from an image index, as containerd's
// platforms.Only(DefaultSpec()) matches: linux, the node's architecture, and for arm64 the v8
// variant or none.
import type { Descriptor, Platform } from './media-types.ts';

/** Node's process.arch → the OCI architecture name. */
const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

/** The platform of this process's machine (linux/amd64, linux/arm64/v8). */
export function nodePlatform(arch: string = process.arch): Platform {
  const architecture = ARCH[arch] ?? arch;
  return architecture === 'arm64' ? { os: 'linux', architecture, variant: 'v8' } : { os: 'linux', architecture };
}

export function formatPlatform(p: Platform): string {
  return [p.os, p.architecture, p.variant].filter(Boolean).join('/');
}

/** Whether an index entry's platform runs on `want` (a missing variant matches the default one). */
export function platformMatches(have: Platform, want: Platform): boolean {
  if (have.os !== want.os || have.architecture !== want.architecture) return false;
  const norm = (p: Platform) => (p.architecture === 'arm64' && (!p.variant || p.variant === 'v8') ? 'v8' : (p.variant ?? ''));
  return norm(have) === norm(want) || (!have.variant && !want.variant);
}

/**
 * The manifest of an index that runs on `want`: the first exact match (variant spelled as
 * asked) before one that matches through the default variant. Entries without a platform (an
 * attestation's, an OCI artifact's) never match. Throws naming the platforms the index has.
 */
export function chooseManifest(manifests: Descriptor[], want: Platform): Descriptor {
  const candidates = manifests.filter((m) => m.platform && platformMatches(m.platform, want));
  const exact = candidates.find((m) => m.platform!.variant === want.variant);
  const chosen = exact ?? candidates[0];
  if (!chosen) {
    const have = manifests.filter((m) => m.platform).map((m) => formatPlatform(m.platform!));
    throw new Error(`no image for ${formatPlatform(want)} (the index has ${have.length ? have.join(', ') : 'no platforms'})`);
  }
  return chosen;
}
