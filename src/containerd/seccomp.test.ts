import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import DEBIAN_PROFILE from 'bronze:seccomp-profile';
import { DEBIAN_SECCOMP_JSON } from '../../image-builder/seccomp-profile.ts';
import { goArch, ociSeccomp, type MobySeccompProfile } from './seccomp.ts';

describe('seccomp profile', () => {
  it('is Debian\'s, read at build time', () => {
    expect(DEBIAN_PROFILE).toEqual(JSON.parse(fs.readFileSync(DEBIAN_SECCOMP_JSON, 'utf8')));
  });

  it('applies arch and cap conditions as moby does', () => {
    const p: MobySeccompProfile = {
      defaultAction: 'SCMP_ACT_ERRNO',
      defaultErrnoRet: 38,
      archMap: [{ architecture: 'SCMP_ARCH_X86_64', subArchitectures: ['SCMP_ARCH_X86'] }],
      syscalls: [
        { names: ['read', 'setns'], action: 'SCMP_ACT_ALLOW' },
        { names: ['arch_prctl'], action: 'SCMP_ACT_ALLOW', includes: { arches: ['amd64'] } },
        { names: ['arm_only'], action: 'SCMP_ACT_ALLOW', includes: { arches: ['arm64'] } },
        { names: ['not_amd64'], action: 'SCMP_ACT_ALLOW', excludes: { arches: ['amd64'] } },
        { names: ['setns'], action: 'SCMP_ACT_ALLOW', includes: { caps: ['CAP_SYS_ADMIN'] } },
        { names: ['setns'], action: 'SCMP_ACT_ERRNO', errnoRet: 1, errno: 'EPERM', excludes: { caps: ['CAP_SYS_ADMIN'] } },
        { names: ['both'], action: 'SCMP_ACT_ALLOW', includes: { caps: ['CAP_A', 'CAP_B'] } },
        { names: ['new'], action: 'SCMP_ACT_ALLOW', includes: { minKernel: '6.13' } },
        { names: ['p'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: 8, op: 'SCMP_CMP_EQ' }], comment: 'x' },
      ],
    };
    const none = ociSeccomp({ arch: 'amd64', caps: [], kernel: '6.12.1' }, p);
    expect(none).toEqual({
      defaultAction: 'SCMP_ACT_ERRNO',
      defaultErrnoRet: 38,
      architectures: ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86'],
      syscalls: [
        { names: ['read'], action: 'SCMP_ACT_ALLOW' },
        { names: ['arch_prctl'], action: 'SCMP_ACT_ALLOW' },
        { names: ['setns'], action: 'SCMP_ACT_ERRNO', errnoRet: 1 },
        { names: ['p'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: 8, valueTwo: 0, op: 'SCMP_CMP_EQ' }] },
      ],
    });
    const admin = ociSeccomp({ arch: 'amd64', caps: ['CAP_SYS_ADMIN', 'CAP_A'] }, p);
    const names = admin.syscalls!.map((r) => `${r.names[0]}:${r.action}`);
    expect(names).toContain('setns:SCMP_ACT_ALLOW');
    expect(names).not.toContain('setns:SCMP_ACT_ERRNO');
    expect(names).not.toContain('both:SCMP_ACT_ALLOW');
    expect(names).toContain('new:SCMP_ACT_ALLOW');
  });

  it('maps Node arches to Go ones', () => {
    expect(goArch('x64')).toBe('amd64');
    expect(goArch('arm64')).toBe('arm64');
    expect(() => goArch('mips')).toThrow();
  });
});
