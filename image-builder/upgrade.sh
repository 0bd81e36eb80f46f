#!/usr/bin/env bash
# Builds the signed upgrade image that `bronzectl upgrade --image` sends to a node: a ustar
# archive whose entries are, in this order,
#
#   manifest.json   {"format":"bronze-upgrade/1","version":"v0.1.0","arch":"amd64",
#                    "roothash":"hex","files":{"vmlinuz":{"size":N,"sha256":"hex"},
#                    "initramfs.xz":{...},"bronze.efi":{...}}}
#                   (one line, then a newline)
#   manifest.sig    the raw 64-byte Ed25519 signature over the exact bytes of manifest.json,
#                   by the key image-builder/signing-key.sh names
#   vmlinuz         the kernel
#   initramfs.xz    the initramfs
#   bronze.efi      the signed unified kernel image, when <dir> has one (amd64: UEFI boots it)
#
# roothash (<dir>/roothash, from image-builder/verity.sh) is the dm-verity root hash of the
# rootfs in initramfs.xz: the slot the node writes boots with it.
#
# The node (src/install/image.ts) reads it as a stream: it checks the signature against the
# key it trusts before it accepts any file, then each file's size and hash against the
# manifest. The archive is reproducible: fixed order, owner, mode and mtime
# (SOURCE_DATE_EPOCH), so the same inputs and key give the same bytes.
#
# usage: image-builder/upgrade.sh <arch> <artifact dir (vmlinuz, initramfs.xz)> <out.tar> [<signed UKI>]
#        the UKI (else <dir>/bronze.efi, when there is one) goes in as bronze.efi: the image
#        for a node that boots under Secure Boot (secureboot/upgrade.tar)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
arch=${1:?arch}; dir=${2:?artifact dir}; out=${3:?out.tar}; uki=${4:-}
case $arch in
  amd64 | arm64) ;;
  *) echo "upgrade.sh: unsupported arch '$arch'" >&2; exit 2 ;;
esac
# The version goes into JSON as it is: keep it to characters that need no escaping.
[[ $BRONZE_VERSION =~ ^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$ ]] \
  || { echo "upgrade.sh: BRONZE_VERSION '$BRONZE_VERSION' is not a version (letters, digits, . _ + -)" >&2; exit 1; }
for f in vmlinuz initramfs.xz roothash; do
  [ -f "$dir/$f" ] || { echo "upgrade.sh: $dir/$f missing" >&2; exit 1; }
done
dir=$(cd "$dir" && pwd)
roothash=$(cat "$dir/roothash")
[[ $roothash =~ ^[0-9a-f]{64}$ ]] || { echo "upgrade.sh: $dir/roothash is not a root hash" >&2; exit 1; }
[ -z "$uki" ] || [ -f "$uki" ] || { echo "upgrade.sh: $uki missing" >&2; exit 1; }
[ -n "$uki" ] || { [ -f "$dir/bronze.efi" ] && uki=$dir/bronze.efi; } || true
files=(vmlinuz initramfs.xz)
[ -n "$uki" ] && files+=(bronze.efi)
key=$("$ROOT/image-builder/signing-key.sh")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out.tmp"' EXIT
# The files, by the names they have in the archive (tar dereferences the links).
mkdir "$tmp/files"
ln -s "$dir/vmlinuz" "$dir/initramfs.xz" "$tmp/files/"
[ -z "$uki" ] || ln -s "$(realpath "$uki")" "$tmp/files/bronze.efi"
entry() { # name: the manifest's entry for one file
  printf '"%s":{"size":%s,"sha256":"%s"}' "$1" "$(stat -L -c %s "$tmp/files/$1")" "$(sha256sum < "$tmp/files/$1" | cut -d' ' -f1)"
}
entries=$(for f in "${files[@]}"; do entry "$f"; echo; done | paste -sd,)
printf '{"format":"bronze-upgrade/1","version":"%s","arch":"%s","roothash":"%s","files":{%s}}\n' \
  "$BRONZE_VERSION" "$arch" "$roothash" "$entries" > "$tmp/manifest.json"
openssl pkeyutl -sign -inkey "$key" -rawin -in "$tmp/manifest.json" -out "$tmp/manifest.sig"
[ "$(stat -c %s "$tmp/manifest.sig")" = 64 ] || { echo "upgrade.sh: $key is not an Ed25519 key" >&2; exit 1; }

# The order of the arguments is the order in the archive; -C takes absolute directories
# (a relative one would be taken from the previous -C). -h: the files, never symlinks.
tar --create --file="$out.tmp" --format=ustar --no-recursion --dereference \
  --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner --mode=0644 \
  -C "$tmp" manifest.json manifest.sig -C "$tmp/files" "${files[@]}"
mv "$out.tmp" "$out"
echo "upgrade: $out ($BRONZE_VERSION $arch, $(stat -c %s "$out") bytes)"
