// readRootfsStatus over a scripted kernel: the device-mapper replies are the kernel's layout
// (src/lib/devmapper.test.ts checks that), here as parsed values. The real ioctl runs under
// QEMU in test/e2e/verity.test.ts.
import { describe, expect, it } from 'vitest';
import { ROOTFS_HASH as HASH, fakeRootfsProbe } from '../../test/lib/rootfs-probe.ts';
import { type RootfsProbe, readRootfsStatus } from './rootfs-status.ts';

describe('readRootfsStatus', () => {
  it('a root preinit verified: the kernel\'s table and status, the command line\'s hash', () => {
    expect(readRootfsStatus(fakeRootfsProbe())).toEqual({
      device: '/dev/dm-0', filesystemType: 'squashfs', verified: true, mapperName: 'bronze-root', rootHash: HASH, hashAlgorithm: 'sha256',
      dataBlockSize: 4096, dataBlocks: 11501, status: 'verified', expectedRootHash: HASH,
    });
  });

  it('says why a root does not count as verified', () => {
    const reason = (p: RootfsProbe) => {
      const s = readRootfsStatus(p);
      expect(s.verified).toBe(false);
      return s.reason;
    };
    expect(reason(fakeRootfsProbe({ status: 'C' }))).toBe('the verity target\'s status is "C" (a corrupted block was read)');
    expect(readRootfsStatus(fakeRootfsProbe({ status: 'C' })).status).toBe('corrupted');
    expect(reason(fakeRootfsProbe({ cmdline: `bronze.roothash=${'0'.repeat(64)}` }))).toBe(`the root hash ${HASH} is not the command line's ${'0'.repeat(64)}`);
    expect(reason(fakeRootfsProbe({ cmdline: 'console=ttyS0' }))).toBe('the kernel command line has no bronze.roothash=');
    expect(reason(fakeRootfsProbe({ table: { readOnly: false } }))).toBe('device-mapper bronze-root is writable');
    expect(reason(fakeRootfsProbe({ table: { type: 'linear', text: '7:0 0' } }))).toBe('device-mapper bronze-root is linear, not one dm-verity target');
    expect(reason(fakeRootfsProbe({ table: { minor: 3 } }))).toBe('device-mapper bronze-root is 254:3, / is on 254:0');
    expect(reason(fakeRootfsProbe({ name: '' }))).toBe('/ is mounted from /dev/dm-0 (254:0), not a device-mapper device: nothing verifies it');
    expect(reason(fakeRootfsProbe({ fail: 'ioctl(/dev/mapper/control, DM_TABLE_STATUS bronze-root): ENXIO' }))).toBe('device-mapper bronze-root: ioctl(/dev/mapper/control, DM_TABLE_STATUS bronze-root): ENXIO');
    expect(reason(fakeRootfsProbe({ mountinfo: '20 1 8:1 / / rw - ext4 /dev/sda1 rw' }))).toBe('/ is mounted from /dev/sda1 (8:1), not a device-mapper device: nothing verifies it');
    expect(reason(fakeRootfsProbe({ mountinfo: '' }))).toBe('no mount of / in /proc/self/mountinfo');
  });
});
