// The installed disk layout as data: what image-builder/disk.sh makes with
//
//   sgdisk --clear --new=1:1MiB:+256MiB ... --new=5:0:+100MiB --new=6:0:0
//
// GPT with 128 entries of 128 bytes (16 KiB), the primary header at LBA 1 and its entry array
// right after it, the backup entry array and header at the end of the disk:
//
//   #  name       type  offset     size
//   1  EFI        EF00  1 MiB      256 MiB   EFI system partition (GRUB's EFI image; under
//                                           Secure Boot, systemd-boot and both slots' UKIs)
//   2  BIOS       EF02  257 MiB    1 MiB     BIOS boot partition (GRUB's i386-pc core image)
//   3  BOOT       8300  258 MiB    844 MiB   A/ and B/ slots, GRUB
//   4  META       8300  1102 MiB   1 MiB     raw key-value store (meta.ts)
//   5  STATE      8300  1103 MiB   100 MiB   machine configuration
//   6  EPHEMERAL  8300  1203 MiB   the rest  /var
//
// Every partition but the last starts and ends on a 1 MiB boundary (sgdisk's default alignment:
// 2048 sectors of 512 bytes), so their places are the same on every disk: GRUB's core image,
// copied byte-for-byte into BIOS, finds its modules through fixed sector numbers. EPHEMERAL
// (`--new=6:0:0`) ends at the last usable LBA, unaligned: sgdisk 1.0.9 does not align the end
// of a partition that runs to the end of the free space (its `sgdisk -v` only notes "doesn't
// end on a 2048-sector boundary"). layout.test.ts checks all of this against the host's sgdisk.

export const MiB = 1024 * 1024;

/** GPT partition type GUIDs (lowercase, as src/disk/gpt-read.ts reports them). */
export const PARTITION_TYPES = {
  /** EF00 */
  efiSystem: 'c12a7328-f81f-11d2-ba4b-00a0c93ec93b',
  /** EF02 */
  biosBoot: '21686148-6449-6e6f-744e-656564454649',
  /** 8300 */
  linuxFilesystem: '0fc63daf-8483-4772-8e79-3d69d8477de4',
} as const;

export type PartitionName = 'EFI' | 'BIOS' | 'BOOT' | 'META' | 'STATE' | 'EPHEMERAL';

interface FixedSpec {
  number: number;
  name: PartitionName;
  typeGuid: string;
  offsetBytes: number;
  /** undefined: to the end of the usable space. */
  sizeBytes?: number;
}

/** The partitions in table order; offsets and sizes in bytes, the same for any sector size. */
export const PARTITION_SPECS: readonly Readonly<FixedSpec>[] = [
  { number: 1, name: 'EFI', typeGuid: PARTITION_TYPES.efiSystem, offsetBytes: 1 * MiB, sizeBytes: 256 * MiB },
  { number: 2, name: 'BIOS', typeGuid: PARTITION_TYPES.biosBoot, offsetBytes: 257 * MiB, sizeBytes: 1 * MiB },
  { number: 3, name: 'BOOT', typeGuid: PARTITION_TYPES.linuxFilesystem, offsetBytes: 258 * MiB, sizeBytes: 844 * MiB },
  { number: 4, name: 'META', typeGuid: PARTITION_TYPES.linuxFilesystem, offsetBytes: 1102 * MiB, sizeBytes: 1 * MiB },
  { number: 5, name: 'STATE', typeGuid: PARTITION_TYPES.linuxFilesystem, offsetBytes: 1103 * MiB, sizeBytes: 100 * MiB },
  { number: 6, name: 'EPHEMERAL', typeGuid: PARTITION_TYPES.linuxFilesystem, offsetBytes: 1203 * MiB },
];

/** Entries in the GPT partition entry array, and the size of one. */
export const GPT_ENTRY_COUNT = 128;
export const GPT_ENTRY_SIZE = 128;

/** Fixed first LBAs on a 512-byte-sector disk (offsetBytes / 512 for other sector sizes). */
export const EFI_FIRST_LBA = 2048;
export const BIOS_BOOT_FIRST_LBA = 526_336;
export const BIOS_BOOT_OFFSET_BYTES = 257 * MiB;
export const BOOT_FIRST_LBA = 528_384;
export const META_FIRST_LBA = 2_256_896;
export const STATE_FIRST_LBA = 2_258_944;
export const EPHEMERAL_FIRST_LBA = 2_463_744;

/** EPHEMERAL's least size: mkfs.xfs refuses filesystems under 300 MB; 300 MiB leaves a margin. */
export const MIN_EPHEMERAL_BYTES = 300 * MiB;

export interface PlannedPartition {
  number: number;
  /** The GPT partition name, also the filesystem label where there is one. */
  name: PartitionName;
  typeGuid: string;
  firstLba: number;
  /** Inclusive. */
  lastLba: number;
  sizeBytes: number;
  offsetBytes: number;
}

export interface DiskLayout {
  sectorSize: number;
  /** Whole sectors on the disk (a partial last sector is not used). */
  totalSectors: number;
  firstUsableLba: number;
  lastUsableLba: number;
  partitions: PlannedPartition[];
}

/** Sectors taken by one copy of the 16 KiB entry array. */
export function entryArraySectors(sectorSize: number): number {
  return Math.ceil((GPT_ENTRY_COUNT * GPT_ENTRY_SIZE) / sectorSize);
}

/** The least disk size planLayout accepts for a sector size: EPHEMERAL gets MIN_EPHEMERAL_BYTES. */
export function minDiskBytes(sectorSize = 512): number {
  checkSectorSize(sectorSize);
  const ephemeralFirst = PARTITION_SPECS[PARTITION_SPECS.length - 1]!.offsetBytes / sectorSize;
  const lastUsable = ephemeralFirst + MIN_EPHEMERAL_BYTES / sectorSize - 1;
  // After the last usable LBA: the backup entry array and the backup header.
  return (lastUsable + 1 + entryArraySectors(sectorSize) + 1) * sectorSize;
}

/** 1_576_026_624 bytes (about 1503 MiB) on a 512-byte-sector disk. */
export const MIN_DISK_BYTES = minDiskBytes(512);

/** The layout of a disk of diskBytes bytes; throws when the disk is too small for it. */
export function planLayout(diskBytes: number, sectorSize = 512): DiskLayout {
  checkSectorSize(sectorSize);
  if (!Number.isSafeInteger(diskBytes) || diskBytes < 0) throw new Error(`disk size ${diskBytes} is not a byte count`);
  const min = minDiskBytes(sectorSize);
  if (diskBytes < min) {
    throw new Error(
      `disk of ${diskBytes} bytes (${formatMiB(diskBytes)}) is too small: the layout needs at least ${min} bytes ` +
        `(${formatMiB(min)}) with ${sectorSize}-byte sectors, for EPHEMERAL to get ${MIN_EPHEMERAL_BYTES / MiB} MiB`,
    );
  }
  const totalSectors = Math.floor(diskBytes / sectorSize);
  const firstUsableLba = 2 + entryArraySectors(sectorSize);
  const lastUsableLba = totalSectors - 2 - entryArraySectors(sectorSize);
  const partitions = PARTITION_SPECS.map((s): PlannedPartition => {
    const firstLba = s.offsetBytes / sectorSize;
    const lastLba = s.sizeBytes === undefined ? lastUsableLba : firstLba + s.sizeBytes / sectorSize - 1;
    return {
      number: s.number,
      name: s.name,
      typeGuid: s.typeGuid,
      firstLba,
      lastLba,
      sizeBytes: (lastLba - firstLba + 1) * sectorSize,
      offsetBytes: s.offsetBytes,
    };
  });
  return { sectorSize, totalSectors, firstUsableLba, lastUsableLba, partitions };
}

/** The planned partition called name (every layout has all six). */
export function partitionByName(layout: DiskLayout, name: PartitionName): PlannedPartition {
  const p = layout.partitions.find((x) => x.name === name);
  if (!p) throw new Error(`layout has no ${name} partition`);
  return p;
}

function checkSectorSize(sectorSize: number): void {
  // 512 to 4096, a power of two: every fixed offset is a whole number of sectors.
  if (sectorSize !== 512 && sectorSize !== 1024 && sectorSize !== 2048 && sectorSize !== 4096) {
    throw new Error(`sector size ${sectorSize} is not supported (512, 1024, 2048 or 4096)`);
  }
}

function formatMiB(bytes: number): string {
  return `${(bytes / MiB).toFixed(1)} MiB`;
}
