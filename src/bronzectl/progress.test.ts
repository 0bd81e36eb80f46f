import { describe, expect, it } from 'vitest';
import { ProgressLines } from './progress.ts';

const MiB = 1 << 20;

describe('ProgressLines', () => {
  it('a line per stage and per tenth of a counted stage, never one per report', () => {
    const out: string[] = [];
    const p = new ProgressLines((l) => out.push(l));
    const total = 45.3 * MiB;
    for (let done = 0; done <= total; done += 64 * 1024) p.report('upload', '', done, total);
    p.report('upload', '', total, total);
    p.report('verify', 'signature and checksums good: Bronze v0.2.0 (amd64)');
    p.report('verify', 'signature and checksums good: Bronze v0.2.0 (amd64)');
    p.report('write', 'slot B: Bronze v0.2.0', 0, '31457280');
    for (let i = 1; i <= 30; i++) p.report('write', `slot B: ${i} MiB`, String(i * MiB), '31457280');
    p.report('write', 'slot B: Bronze v0.2.0 written; GRUB boots it once next', 30 * MiB, 30 * MiB);
    p.report('write', 'EPHEMERAL (/var) will be wiped at the reboot');
    p.report('partition', '/dev/sdb', 1, 4);
    p.report('partition', '/dev/sdb', 4, 4);
    expect(out).toEqual([
      'upload 0.0/45.3 MiB',
      'upload 4.6/45.3 MiB',
      'upload 9.1/45.3 MiB',
      'upload 13.6/45.3 MiB',
      'upload 18.1/45.3 MiB',
      'upload 22.7/45.3 MiB',
      'upload 27.2/45.3 MiB',
      'upload 31.8/45.3 MiB',
      'upload 36.3/45.3 MiB',
      'upload 40.8/45.3 MiB',
      'upload 45.3/45.3 MiB',
      'verify: signature and checksums good: Bronze v0.2.0 (amd64)',
      'write 0.0/30.0 MiB: slot B: Bronze v0.2.0',
      'write 3.0/30.0 MiB: slot B: 3 MiB',
      'write 6.0/30.0 MiB: slot B: 6 MiB',
      'write 9.0/30.0 MiB: slot B: 9 MiB',
      'write 12.0/30.0 MiB: slot B: 12 MiB',
      'write 15.0/30.0 MiB: slot B: 15 MiB',
      'write 18.0/30.0 MiB: slot B: 18 MiB',
      'write 21.0/30.0 MiB: slot B: 21 MiB',
      'write 24.0/30.0 MiB: slot B: 24 MiB',
      'write 27.0/30.0 MiB: slot B: 27 MiB',
      'write 30.0/30.0 MiB: slot B: 30 MiB',
      'write 30.0/30.0 MiB: slot B: Bronze v0.2.0 written; GRUB boots it once next',
      'write: EPHEMERAL (/var) will be wiped at the reboot',
      'partition 1/4: /dev/sdb',
      'partition 4/4',
    ]);
  });
});
