import { describe, expect, it } from 'vitest';
import { EARLY_MOUNTS, parseMountinfo } from './mounts.ts';

describe('mount table', () => {
  it('mounts every runtime filesystem the node needs, each once', () => {
    const targets = EARLY_MOUNTS.map((m) => m.target);
    expect(new Set(targets).size).toBe(targets.length);
    for (const t of ['/proc', '/sys', '/dev', '/dev/pts', '/dev/shm', '/run', '/system', '/tmp', '/sys/fs/cgroup']) expect(targets).toContain(t);
    // parents before children
    for (const [i, t] of targets.entries()) {
      const parent = targets.findIndex((p) => p !== t && t.startsWith(p + '/'));
      if (parent >= 0) expect(parent).toBeLessThan(i);
    }
  });
  it('parses mountinfo, including escaped spaces', () => {
    const text =
      '22 1 0:21 / /proc rw,nosuid,nodev,noexec - proc proc rw\n' +
      '30 22 0:40 / /mnt/with\\040space rw - tmpfs tmpfs rw,size=10k\n';
    expect(parseMountinfo(text)).toEqual([
      { target: '/proc', fstype: 'proc', source: 'proc', options: ['rw', 'nosuid', 'nodev', 'noexec'] },
      { target: '/mnt/with space', fstype: 'tmpfs', source: 'tmpfs', options: ['rw', 'size=10k'] },
    ]);
  });
});
