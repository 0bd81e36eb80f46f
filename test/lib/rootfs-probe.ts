// A scripted kernel for readRootfsStatus (src/machined/rootfs-status.ts): a node booted as
// preinit boots it (the root on dm-verity device bronze-root, 254:0), with what a test changes.
import type { DmDevice } from '../../src/lib/devmapper.ts';
import { parseCmdline } from '../../src/machined/cmdline.ts';
import type { RootfsProbe } from '../../src/machined/rootfs-status.ts';

export const ROOTFS_HASH = '8e4be93999072ee3b8ff5784bc67c3ec37888116f335286c19e5f6e516c5648c';
const MOUNTINFO = [
  '1 1 0:2 / / rw - rootfs rootfs rw',
  '20 1 254:0 / / ro,nodev,relatime - squashfs /dev/dm-0 ro,errors=continue',
  '21 20 0:5 / /dev rw,nosuid - devtmpfs devtmpfs rw',
].join('\n');

/** A node booted as preinit boots it, with `change` applied. */
export function fakeRootfsProbe(change: { mountinfo?: string; name?: string; table?: Partial<DmDevice> & { text?: string; type?: string }; status?: string; cmdline?: string; fail?: string } = {}): RootfsProbe {
  return {
    mountinfo: () => change.mountinfo ?? MOUNTINFO,
    sysfs: (rel) => (rel === 'dev/block/254:0/dm/name' && change.name !== '' ? `${change.name ?? 'bronze-root'}\n` : undefined),
    dm: (name, table) => {
      if (change.fail) throw new Error(change.fail);
      const base = { name, major: 254, minor: 0, readOnly: true, ...change.table };
      return table
        ? { ...base, targets: [{ start: 0, length: 11501 * 8, type: change.table?.type ?? 'verity', text: change.table?.text ?? `1 7:0 7:0 4096 4096 11501 11502 sha256 ${ROOTFS_HASH} 00ff 1 check_at_most_once` }] }
        : { ...base, targets: [{ start: 0, length: 11501 * 8, type: 'verity', text: change.status ?? 'V' }] };
    },
    cmdline: () => parseCmdline(change.cmdline ?? `console=ttyS0 bronze.roothash=${ROOTFS_HASH}`),
  };
}
