#!/usr/bin/env bash
# Builds the Secure Boot EFI system partition (a FAT image) for amd64 UEFI:
#
#   EFI/BOOT/BOOTX64.EFI         systemd-boot (Debian's systemd-boot-efi), signed with the db key
#   EFI/Linux/bronze.efi         the signed UKI (image-builder/uki.sh): a type #2 entry that
#                                systemd-boot finds by itself; on an installed disk's ESP
#                                (--slot), EFI/Linux/bronze-a.efi and, after an upgrade,
#                                bronze-b.efi: one per slot (lower case: systemd-boot's entry
#                                ids are the file names, and machined names them in EFI variables)
#   loader/loader.conf           secure-boot-enroll force: a firmware in setup mode gets
#                                Bronze's keys from loader/keys/auto, then boots enforcing;
#                                default: the slot's entry (machined rewrites it when another
#                                slot is committed), else any bronze* entry
#   loader/keys/auto/{PK,KEK,db}.auth
#
# usage: image-builder/secureboot-esp.sh <arch> <signed UKI (bronze.efi)> <out.img> [--slot A|B] [--size <bytes>]
#        --slot: the UKI is that slot's entry, and the default; --size: the FAT image's size
#        (an ESP partition's), else just what the files need
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
arch=${1:?arch}; uki=${2:?signed UKI}; out=${3:?out.img}; shift 3
slot=; size=
while [ $# -gt 0 ]; do
  case $1 in
    --slot) slot=${2:?--slot A|B}; shift 2 ;;
    --size) size=${2:?--size bytes}; shift 2 ;;
    *) echo "secureboot-esp.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
case $slot in
  '') entry=bronze.efi; default='bronze*' ;;
  A | B) entry=bronze-$(tr AB ab <<< "$slot").efi; default=$entry ;;
  *) echo "secureboot-esp.sh: --slot '$slot' is not A or B" >&2; exit 2 ;;
esac
case $arch in
  amd64) sdboot=/usr/lib/systemd/boot/efi/systemd-bootx64.efi ;;
  *) echo "secureboot-esp.sh: amd64 only" >&2; exit 2 ;;
esac
[ -f "$sdboot" ] || { echo "secureboot-esp.sh: $sdboot missing (apt-get install systemd-boot-efi)" >&2; exit 1; }
[ -f "$uki" ] || { echo "secureboot-esp.sh: $uki missing (image-builder/uki.sh)" >&2; exit 1; }
for tool in sbsign mkfs.vfat mmd mcopy; do
  command -v "$tool" >/dev/null || { echo "secureboot-esp.sh: $tool missing (apt-get install sbsigntool dosfstools mtools)" >&2; exit 1; }
done
keys=$("$ROOT/image-builder/secureboot-keys.sh")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sbsign --key "$keys/db.key" --cert "$keys/db.crt" --output "$tmp/BOOTX64.EFI" "$sdboot" 2>/dev/null
cat > "$tmp/loader.conf" <<EOF
timeout 1
default $default
console-mode keep
secure-boot-enroll force
EOF
need_kib=$(( ( $(stat -c %s "$uki") + $(stat -c %s "$tmp/BOOTX64.EFI") ) / 1024 + 8192 ))
size_kib=${size:+$(( size / 1024 ))}
size_kib=${size_kib:-$need_kib}
[ "$size_kib" -ge "$need_kib" ] || { echo "secureboot-esp.sh: --size $size is less than the $((need_kib * 1024)) bytes the files need" >&2; exit 1; }
rm -f "$out.tmp"
mkfs.vfat -C ${size:+-F 32} -n BRONZE-ESP -i 42524f4e "$out.tmp" "$size_kib" >/dev/null
export MTOOLS_SKIP_CHECK=1
mmd -i "$out.tmp" ::/EFI ::/EFI/BOOT ::/EFI/Linux ::/loader ::/loader/keys ::/loader/keys/auto
mcopy -i "$out.tmp" "$tmp/BOOTX64.EFI" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$out.tmp" "$uki" "::/EFI/Linux/$entry"
mcopy -i "$out.tmp" "$tmp/loader.conf" ::/loader/loader.conf
for k in PK KEK db; do mcopy -i "$out.tmp" "$keys/$k.auth" "::/loader/keys/auto/$k.auth"; done
mv "$out.tmp" "$out"
echo "secureboot-esp: $out ($(stat -c %s "$out") bytes: signed systemd-boot, signed UKI, keys to enroll)"
