#!/usr/bin/env bash
# Builds secureboot/disk.raw: disk.raw (image-builder/disk.sh) whose EFI system partition boots
# under UEFI Secure Boot: signed systemd-boot, slot A's signed UKI as EFI/Linux/bronze-a.efi
# and the default entry, Bronze's keys to enroll from setup mode (image-builder/secureboot-esp.sh).
# BIOS still boots GRUB from the BIOS boot partition and BOOT, as on disk.raw; BOOT's slot A
# holds the same kernel and initramfs as the UKI. An upgrade writes the other slot's UKI beside
# it (bronze-b.efi) and boots it once (systemd-boot's LoaderEntryOneShot); machined makes it the
# default once it is Running (src/machined/lifecycle/sdboot.ts).
#
# usage: image-builder/secureboot-disk.sh <arch> <disk.raw> <signed UKI (bronze.efi)> <out.raw>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
. "$ROOT/image-builder/layout.sh"
arch=${1:?arch}; disk=${2:?disk.raw}; uki=${3:?signed UKI}; out=${4:?out.raw}
[ "$arch" = amd64 ] || { echo "secureboot-disk.sh: amd64 only" >&2; exit 2; }
for f in "$disk" "$uki"; do [ -f "$f" ] || { echo "secureboot-disk.sh: $f missing" >&2; exit 1; }; done

tmp=$out.tmp
trap 'rm -f "$tmp" "$tmp.esp"' EXIT
cp --sparse=always "$disk" "$tmp"
"$ROOT/image-builder/secureboot-esp.sh" "$arch" "$uki" "$tmp.esp" --slot A --size "$(part_bytes "$tmp" 1)" > /dev/null
dd if="$tmp.esp" of="$tmp" bs=1M seek="$(($(first_sector "$tmp" 1) * 512))" oflag=seek_bytes conv=notrunc,sparse status=none
mv "$tmp" "$out"
echo "secureboot-disk: $out (disk.raw with a Secure Boot ESP: signed systemd-boot, EFI/Linux/bronze-a.efi, keys to enroll)"
