#!/usr/bin/env bash
# Builds disk.raw: a sparse raw disk image of an installed node (dd it to a disk, or give it to
# a VM), booting with BIOS and UEFI (arm64: UEFI): what machined's installer writes to a disk. GPT as
# image-builder/layout.sh has it, the partitions named (GPT partition names, which machined
# looks for) and, where there is a filesystem, labelled the same:
#
#   1 EFI        256 MiB  vfat, EFI system partition: EFI/BOOT/BOOTX64.EFI (arm64: BOOTAA64.EFI;
#                         GRUB, removable path)
#   2 BIOS         1 MiB  BIOS boot partition (EF02): GRUB's i386-pc core image (arm64: empty)
#   3 BOOT       844 MiB  xfs: A/{vmlinuz,initramfs.xz,roothash.env}, B/ (empty), grub/{grub.cfg,grubenv}
#                         and GRUB's modules (grub/i386-pc, grub/x86_64-efi; arm64: grub/arm64-efi)
#   4 META         1 MiB  zeroed (an empty store; src/install/meta.ts)
#   5 STATE      100 MiB  xfs, empty (the machine configuration goes here; /system/state)
#   6 EPHEMERAL  the rest xfs, empty (/var)
#
# grub/grub.cfg comes from image-builder/grub/disk.cfg, which documents the grubenv variables
# that pick the slot (saved_entry, next_entry, next_tries, bronze_extra). grubenv starts with
# saved_entry=A. Needs root: loop devices (always detached again) and mounts.
#
# mkfs.xfs refuses filesystems under 300 MB unless it believes it runs under fstests; STATE
# is 100 MiB as Talos has it, so the three fstests variables are set for that one call.
#
# Partition UUIDs and the STATE/EPHEMERAL filesystem UUIDs are random, so two builds differ
# (and two disks made from one image share them, as with any disk image). BOOT's UUID is the
# one GRUB's core images search for (image-builder/bootloader.sh).
#
# usage: image-builder/disk.sh <arch> <artifact dir (vmlinuz, initramfs.xz, bootloader/)> <out.raw>
#        BRONZE_DISK_SIZE (default 2G, at least 1600M) sizes the image; EPHEMERAL takes what is
#        left (xfs wants 300 MB or more).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
. "$ROOT/image-builder/layout.sh"
arch=${1:?arch}; dir=${2:?artifact dir}; out=${3:?out.raw}
case $arch in
  amd64) bios=1 ;;
  arm64) bios= ;; # UEFI only
  *) echo "disk.sh: unsupported arch '$arch'" >&2; exit 2 ;;
esac
bl=$dir/bootloader
for f in vmlinuz initramfs.xz roothash bootloader/efi.img bootloader/boot-uuid bootloader/grub/grub.cfg ${bios:+bootloader/mbr.bin bootloader/bios.img}; do
  [ -e "$dir/$f" ] || { echo "disk.sh: $dir/$f missing" >&2; exit 1; }
done
for tool in sgdisk losetup mkfs.xfs grub-editenv; do
  command -v "$tool" >/dev/null || { echo "disk.sh: $tool missing (scripts/deps.sh installs it)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "disk.sh: needs root (loop devices, mounts)" >&2; exit 1; }

tmp=$out.tmp
mnt=$(mktemp -d "${TMPDIR:-/tmp}/bronze-disk.XXXXXX")
loops=()
cleanup() {
  local rc=$?
  mountpoint -q "$mnt/boot" && umount "$mnt/boot"
  for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
  rm -rf "$mnt"
  [ $rc = 0 ] || rm -f "$tmp"
  return $rc
}
trap cleanup EXIT

rm -f "$tmp"
truncate -s "${BRONZE_DISK_SIZE:-2G}" "$tmp"
gpt_layout "$tmp"

# One loop device per formatted partition, by offset: the partitions do not depend on the
# build kernel reading GPT (`losetup --partscan` makes no loopNpM on kernels without
# CONFIG_EFI_PARTITION).
attach() { # attach [<partition number>] -> prints the loop device
  local args=()
  if [ -n "${1:-}" ]; then
    local first last
    first=$(first_sector "$tmp" "$1"); last=$(last_sector "$tmp" "$1")
    args=(--offset $((first * 512)) --sizelimit $(((last - first + 1) * 512)))
  fi
  losetup --find --show "${args[@]}" "$tmp"
}
boot=$(attach 3); loops+=("$boot")
state=$(attach 5); loops+=("$state")
ephemeral=$(attach 6); loops+=("$ephemeral")

mkfs.xfs -q -f -L BOOT -m uuid="$(cat "$bl/boot-uuid")" "$boot"
TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs.xfs -q -f -L STATE "$state"
mkfs.xfs -q -f -L EPHEMERAL "$ephemeral"

mkdir -p "$mnt/boot"
mount -t xfs "$boot" "$mnt/boot"
mkdir -p "$mnt/boot/A" "$mnt/boot/B" "$mnt/boot/grub"
cp "$dir/vmlinuz" "$dir/initramfs.xz" "$mnt/boot/A/"
# The slot's root hash, for GRUB's load_env (image-builder/grub/disk.cfg).
grub-editenv "$mnt/boot/A/roothash.env" create
grub-editenv "$mnt/boot/A/roothash.env" set "bronze_roothash=$(cat "$dir/roothash")"

# GRUB for both firmwares (arm64: UEFI), from image-builder/bootloader.sh: boot code into the
# MBR, the core images into the BIOS boot partition and the ESP, the modules and grub.cfg onto
# BOOT (made with the UUID the core images search for). machined's installer does the same on a node.
if [ -n "$bios" ]; then
  dd if="$bl/mbr.bin" of="$tmp" bs=440 count=1 conv=notrunc status=none
  dd if="$bl/bios.img" of="$tmp" bs=512 seek="$(first_sector "$tmp" 2)" conv=notrunc status=none
fi
dd if="$bl/efi.img" of="$tmp" bs=1M seek="$(($(first_sector "$tmp" 1) * 512))" oflag=seek_bytes conv=notrunc,sparse status=none
cp -r "$bl/grub/." "$mnt/boot/grub/"
rm -f "$mnt/boot/grub/grubenv"
grub-editenv "$mnt/boot/grub/grubenv" create
grub-editenv "$mnt/boot/grub/grubenv" set saved_entry=A

sync
umount "$mnt/boot"
for l in "${loops[@]}"; do losetup -d "$l"; done
loops=()
mv "$tmp" "$out"
echo "disk: $out ($(stat -c %s "$out") bytes, $(du -k "$out" | cut -f1) KiB used; GPT EFI BIOS BOOT META STATE EPHEMERAL; ${bios:+BIOS and }UEFI)"
