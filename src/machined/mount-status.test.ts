import { describe, expect, it } from 'vitest';
import { mountStatuses } from './mount-status.ts';

describe('mountStatuses', () => {
  it('one per mounted volume, as the mount table shows it', () => {
    const table = [
      { target: '/var', fstype: 'tmpfs', source: 'var', options: ['rw'] },
      { target: '/var', fstype: 'xfs', source: '/dev/vda6', options: ['rw', 'nosuid', 'nodev', 'relatime', 'attr2'] },
      { target: '/system/state', fstype: 'xfs', source: '/dev/vda5', options: ['rw', 'nosuid', 'nodev'] },
    ];
    const volumes = {
      mounted: [
        { label: 'STATE' as const, device: '/dev/vda5', target: '/system/state' },
        { label: 'EPHEMERAL' as const, device: '/dev/vda6', target: '/var' },
      ],
    };
    expect(Object.fromEntries(mountStatuses(volumes, table))).toEqual({
      STATE: { source: '/dev/vda5', target: '/system/state', filesystemType: 'xfs', options: ['rw', 'nosuid', 'nodev'], encrypted: false },
      EPHEMERAL: { source: '/dev/vda6', target: '/var', filesystemType: 'xfs', options: ['rw', 'nosuid', 'nodev', 'relatime', 'attr2'], encrypted: false },
    });
  });

  it('none without a disk, or once a volume is no longer mounted', () => {
    expect(mountStatuses(undefined, []).size).toBe(0);
    expect(mountStatuses({ mounted: [{ label: 'STATE', device: '/dev/vda5', target: '/system/state' }] }, []).size).toBe(0);
  });
});
