#!/usr/bin/env bash
# Builds secureboot/bronze.iso: install media for UEFI Secure Boot (amd64). Its El Torito EFI
# boot image is the Secure Boot EFI system partition (image-builder/secureboot-esp.sh: signed
# systemd-boot, which enrolls Bronze's keys from setup mode, and the signed UKI), a file inside
# the ISO 9660 volume: the image is over 32 MiB, more than El Torito's sector count can say, so
# the catalog says 0 and the firmware (edk2) takes the boot image to run from its start to the
# end of the volume (an image appended after the volume, as xorriso's
# -append_partition puts it, would lie outside it: OVMF finds no filesystem there). The ISO 9660
# filesystem (labelled BRONZE, as bronze.iso's) also holds what machined's installer copies:
#
#   boot/vmlinuz, boot/initramfs.xz, boot/roothash   slot A (BOOT, as from bronze.iso)
#   boot/bronze.efi                                  the signed UKI: slot A's ESP entry
#   efi/esp.img                                      the El Torito EFI boot image
#
# No BIOS boot: Secure Boot is UEFI's (bronze.iso boots BIOS, and UEFI without Secure Boot).
#
# usage: image-builder/secureboot-iso.sh <arch> <artifact dir (vmlinuz initramfs.xz roothash)> <bronze.efi> <esp.img> <out.iso>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
arch=${1:?arch}; dir=${2:?artifact dir}; uki=${3:?signed UKI}; esp=${4:?esp.img}; out=${5:?out.iso}
[ "$arch" = amd64 ] || { echo "secureboot-iso.sh: amd64 only" >&2; exit 2; }
for f in "$dir/vmlinuz" "$dir/initramfs.xz" "$dir/roothash" "$uki" "$esp"; do
  [ -f "$f" ] || { echo "secureboot-iso.sh: $f missing" >&2; exit 1; }
done
command -v xorriso >/dev/null || { echo "secureboot-iso.sh: xorriso missing (apt-get install xorriso)" >&2; exit 1; }

stage=$out.stage
trap 'rm -rf "$stage" "$out.tmp"' EXIT
rm -rf "$stage"; mkdir -p "$stage/boot"
cp "$dir/vmlinuz" "$dir/initramfs.xz" "$dir/roothash" "$stage/boot/"
cp "$uki" "$stage/boot/bronze.efi"
mkdir -p "$stage/efi"
cp "$esp" "$stage/efi/esp.img"
find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
rm -f "$out.tmp"
# (xorriso dates the volume from SOURCE_DATE_EPOCH, which env.sh exports.)
xorriso -as mkisofs -o "$out.tmp" -volid BRONZE -rational-rock \
  -e efi/esp.img -no-emul-boot "$stage" 2> "$stage.log" || { cat "$stage.log" >&2; rm -f "$stage.log"; exit 1; }
rm -f "$stage.log"
mv "$out.tmp" "$out"
echo "secureboot-iso: $out ($(stat -c %s "$out") bytes; UEFI Secure Boot: systemd-boot and the signed UKI, the install files)"
