// Turns a moby-style seccomp profile (Debian's /usr/share/containers/seccomp.json, read at build
// time: the module `bronze:seccomp-profile`, image-builder/seccomp-profile.ts) into the OCI runtime spec's `linux.seccomp` for one node architecture and
// one container's capability set.
//
// Written by hand: the conversion lives in Go (moby's profiles/seccomp, containers/common's
// pkg/seccomp) and containerd 1.6 leaves it to its client; no JavaScript package does it. The
// rules follow moby's setupSeccomp: a rule applies when every `includes` condition holds and no
// `excludes` condition does; arches are Go arch names (amd64, arm64), caps are CAP_* names.
import DEBIAN_PROFILE from 'bronze:seccomp-profile';

export interface MobySeccompArg {
  index: number;
  value: number;
  valueTwo?: number;
  op: string;
}

export interface MobySeccompFilter {
  caps?: string[];
  arches?: string[];
  minKernel?: string;
}

export interface MobySeccompRule {
  name?: string;
  names?: string[];
  action: string;
  args?: MobySeccompArg[] | null;
  comment?: string;
  includes?: MobySeccompFilter;
  excludes?: MobySeccompFilter;
  errnoRet?: number;
  errno?: string;
}

export interface MobySeccompProfile {
  defaultAction: string;
  defaultErrnoRet?: number;
  defaultErrno?: string;
  archMap?: { architecture: string; subArchitectures?: string[] | null }[];
  syscalls: MobySeccompRule[];
}

/** OCI runtime-spec `linux.seccomp`. */
export interface OciSeccomp {
  defaultAction: string;
  defaultErrnoRet?: number;
  architectures?: string[];
  syscalls?: { names: string[]; action: string; errnoRet?: number; args?: { index: number; value: number; valueTwo?: number; op: string }[] }[];
}

/** Node.js's process.arch → the Go arch names the profile's `arches` use. */
const GO_ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };
/** Go arch → the native libseccomp arch whose archMap entry names the sub-arches to add. */
const NATIVE_SCMP: Record<string, string> = {
  amd64: 'SCMP_ARCH_X86_64',
  arm64: 'SCMP_ARCH_AARCH64',
  '386': 'SCMP_ARCH_X86',
  arm: 'SCMP_ARCH_ARM',
  ppc64le: 'SCMP_ARCH_PPC64LE',
  s390x: 'SCMP_ARCH_S390X',
  riscv64: 'SCMP_ARCH_RISCV64',
};

/** The Go arch name of a Node.js arch (`x64` → `amd64`). */
export function goArch(nodeArch: string = process.arch): string {
  const a = GO_ARCH[nodeArch];
  if (!a) throw new Error(`no seccomp architecture known for ${nodeArch}`);
  return a;
}

/** `kernel` ('6.12.1-foo') is at least `min` ('4.8'). */
function kernelAtLeast(kernel: string, min: string): boolean {
  const parse = (v: string) => v.split(/[.-]/).slice(0, 2).map((p) => Number.parseInt(p, 10) || 0);
  const [a = 0, b = 0] = parse(kernel);
  const [c = 0, d = 0] = parse(min);
  return a > c || (a === c && b >= d);
}

export interface SeccompOptions {
  /** Go arch name (amd64, arm64). */
  arch: string;
  /** The container's bounding capabilities (CAP_* names). */
  caps: readonly string[];
  /** Kernel release for `minKernel` conditions; unset: such rules apply. */
  kernel?: string;
}

/** The OCI seccomp section of `profile` for this arch and capability set. */
export function ociSeccomp(opts: SeccompOptions, profile: MobySeccompProfile = DEBIAN_PROFILE): OciSeccomp {
  const native = NATIVE_SCMP[opts.arch];
  const architectures: string[] = [];
  const entry = profile.archMap?.find((m) => m.architecture === native);
  if (entry) architectures.push(entry.architecture, ...(entry.subArchitectures ?? []));
  else if (native) architectures.push(native);

  const caps = new Set(opts.caps);
  const applies = (r: MobySeccompRule): boolean => {
    const inc = r.includes ?? {};
    const exc = r.excludes ?? {};
    if (inc.arches?.length && !inc.arches.includes(opts.arch)) return false;
    if (exc.arches?.length && exc.arches.includes(opts.arch)) return false;
    // moby: every included cap must be held; holding any excluded cap drops the rule.
    if (inc.caps?.length && !inc.caps.every((c) => caps.has(c))) return false;
    if (exc.caps?.length && exc.caps.some((c) => caps.has(c))) return false;
    if (inc.minKernel && opts.kernel && !kernelAtLeast(opts.kernel, inc.minKernel)) return false;
    return true;
  };

  const nameList = (r: MobySeccompRule): string[] => (r.names?.length ? r.names : r.name ? [r.name] : []);
  const conditional = (r: MobySeccompRule) => Boolean(r.includes?.caps?.length || r.excludes?.caps?.length || r.includes?.arches?.length || r.excludes?.arches?.length);
  // containers-common's profile lists some syscalls (setns) both in its unconditional allow list
  // and in a cap-conditioned rule with another action; libseccomp refuses two argument-less rules
  // of different actions for one syscall, and the conditioned rule is the one meant. So a name an
  // applying conditioned argument-less rule takes leaves the unconditional ones.
  const specific = new Set(profile.syscalls.filter((r) => applies(r) && conditional(r) && !r.args?.length).flatMap(nameList));
  const syscalls: NonNullable<OciSeccomp['syscalls']> = [];
  for (const r of profile.syscalls) {
    if (!applies(r)) continue;
    let names = nameList(r);
    if (!conditional(r) && !r.args?.length) names = names.filter((n) => !specific.has(n));
    if (names.length === 0) continue;
    const out: NonNullable<OciSeccomp['syscalls']>[number] = { names: [...names], action: r.action };
    if (r.errnoRet !== undefined) out.errnoRet = r.errnoRet;
    if (r.args?.length) out.args = r.args.map((a) => ({ index: a.index, value: a.value, valueTwo: a.valueTwo ?? 0, op: a.op }));
    syscalls.push(out);
  }
  const result: OciSeccomp = { defaultAction: profile.defaultAction, architectures, syscalls };
  if (profile.defaultErrnoRet !== undefined) result.defaultErrnoRet = profile.defaultErrnoRet;
  return result;
}
