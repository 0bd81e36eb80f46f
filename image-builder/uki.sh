#!/usr/bin/env bash
# Builds Bronze's unified kernel image (UKI) for UEFI Secure Boot, signed:
#
#   the EFI stub of Debian's systemd-boot-efi (linuxx64.efi.stub), with the sections
#   .osrel    os-release (the rootfs's, stamped with the version)
#   .cmdline  the kernel command line with bronze.roothash= (the stub ignores any other command
#             line under Secure Boot, so the root hash cannot be changed without the signature)
#   .linux    the kernel
#   .initrd   the initramfs
#   then signed by sbsign with the Secure Boot db key (image-builder/secureboot-keys.sh).
#
# Each section is placed after the previous one, on 4 KiB boundaries, from the stub's own end
# (objcopy --change-section-vma), as systemd's documentation lays a UKI out by hand; Debian 12
# has no ukify.
#
# usage: image-builder/uki.sh <arch> <artifact dir (vmlinuz initramfs.xz cmdline roothash)> <out.efi>
#        BRONZE_UKI_APPEND: more kernel arguments. BRONZE_SECUREBOOT_KEYS: the key directory.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
arch=${1:?arch}; dir=${2:?artifact dir}; out=${3:?out.efi}
case $arch in
  amd64) stub=/usr/lib/systemd/boot/efi/linuxx64.efi.stub ;;
  *) echo "uki.sh: no Secure Boot UKI for '$arch' (amd64 only)" >&2; exit 2 ;;
esac
[ -f "$stub" ] || { echo "uki.sh: $stub missing (apt-get install systemd-boot-efi)" >&2; exit 1; }
for tool in objcopy objdump sbsign sbverify; do
  command -v "$tool" >/dev/null || { echo "uki.sh: $tool missing (apt-get install binutils sbsigntool)" >&2; exit 1; }
done
for f in vmlinuz initramfs.xz cmdline roothash; do
  [ -f "$dir/$f" ] || { echo "uki.sh: $dir/$f missing" >&2; exit 1; }
done
keys=$("$ROOT/image-builder/secureboot-keys.sh")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s%s\n' "$("$ROOT/image-builder/cmdline.sh" "$dir/cmdline" "$dir/roothash")" \
  "${BRONZE_UKI_APPEND:+ $BRONZE_UKI_APPEND}" > "$tmp/cmdline"
sed "s/@VERSION@/$BRONZE_VERSION/g" "$ROOT/rootfs/etc/os-release" > "$tmp/os-release"

# The first free address after the stub's sections, then each section on a 4 KiB boundary.
align() { echo $(( ($1 + 4095) / 4096 * 4096 )); }
next=0
while read -r size vma; do
  (( 0x$vma + 0x$size > next )) && next=$(( 0x$vma + 0x$size ))
done < <(objdump -h -w "$stub" | awk '$1 ~ /^[0-9]+$/ { print $3, $4 }')
args=()
for s in osrel:os-release cmdline:cmdline linux:vmlinuz initrd:initramfs.xz; do
  name=${s%%:*}; file=${s#*:}
  [ -f "$tmp/$file" ] && path=$tmp/$file || path=$dir/$file
  next=$(align "$next")
  args+=(--add-section ".$name=$path" --change-section-vma ".$name=$(printf '0x%x' "$next")")
  next=$(( next + $(stat -L -c %s "$path") ))
done
objcopy "${args[@]}" "$stub" "$tmp/unsigned.efi"
sbsign --key "$keys/db.key" --cert "$keys/db.crt" --output "$tmp/signed.efi" "$tmp/unsigned.efi" 2>/dev/null
# (sbverify warns of the gaps objcopy leaves between sections: the signature covers them too.)
sbverify --cert "$keys/db.crt" "$tmp/signed.efi" >/dev/null 2>&1 || { echo "uki.sh: $out does not verify against $keys/db.crt" >&2; exit 1; }
mv "$tmp/signed.efi" "$out"
echo "uki: $out ($(stat -c %s "$out") bytes, signed by $(openssl x509 -in "$keys/db.crt" -noout -subject | sed 's/^subject=//'))"
