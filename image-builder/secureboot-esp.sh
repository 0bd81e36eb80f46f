#!/usr/bin/env bash
# Builds the Secure Boot EFI system partition (a FAT image) for amd64 UEFI:
#
#   EFI/BOOT/BOOTX64.EFI         systemd-boot (Debian's systemd-boot-efi), signed with the db key
#   EFI/Linux/bronze.efi         the signed UKI (image-builder/uki.sh): a type #2 entry that
#                                systemd-boot finds by itself
#   loader/loader.conf           secure-boot-enroll force: a firmware in setup mode gets
#                                Bronze's keys from loader/keys/auto, then boots enforcing
#   loader/keys/auto/{PK,KEK,db}.auth
#
# usage: image-builder/secureboot-esp.sh <arch> <signed UKI (bronze.efi)> <out.img>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
arch=${1:?arch}; uki=${2:?signed UKI}; out=${3:?out.img}
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
default bronze*
console-mode keep
secure-boot-enroll force
EOF
size_kib=$(( ( $(stat -c %s "$uki") + $(stat -c %s "$tmp/BOOTX64.EFI") ) / 1024 + 8192 ))
rm -f "$out.tmp"
mkfs.vfat -C -n BRONZE-ESP -i 42524f4e "$out.tmp" "$size_kib" >/dev/null
export MTOOLS_SKIP_CHECK=1
mmd -i "$out.tmp" ::/EFI ::/EFI/BOOT ::/EFI/Linux ::/loader ::/loader/keys ::/loader/keys/auto
mcopy -i "$out.tmp" "$tmp/BOOTX64.EFI" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$out.tmp" "$uki" ::/EFI/Linux/bronze.efi
mcopy -i "$out.tmp" "$tmp/loader.conf" ::/loader/loader.conf
for k in PK KEK db; do mcopy -i "$out.tmp" "$keys/$k.auth" "::/loader/keys/auto/$k.auth"; done
mv "$out.tmp" "$out"
echo "secureboot-esp: $out ($(stat -c %s "$out") bytes: signed systemd-boot, signed UKI, keys to enroll)"
