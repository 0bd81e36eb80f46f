#!/usr/bin/env bash
# The upgrade images the end-to-end tests need besides the image under test, built from the
# same tree with the same kernel and signing key:
#
#   next/upgrade.tar     the same sources as another version (<version>-next): an upgrade
#                        the node must take, and roll back from; on amd64 also
#   next/secureboot-upgrade.tar  the same with its signed UKI (image-builder/uki.sh), for a
#                        node that boots under Secure Boot
#   broken/upgrade.tar   an image whose machined exits at once (test/fixtures/broken-machined.ts):
#                        the kernel panics on it, and the node must come back on the old slot
#
# usage: image-builder/test-images.sh <arch> <artifact dir (vmlinuz, bootloader/)> <out dir> [<name>...]
#        names: next, broken (default: both)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
arch=${1:?arch}; dir=$(realpath "${2:?artifact dir}"); out=${3:?out dir}; shift 3
names=("$@"); [ ${#names[@]} -gt 0 ] || names=(next broken)
ib=$ROOT/image-builder

build() { # build <name> <version> [<main.ts>: a main script alone instead of the role bundles]
  local name=$1 version=$2 entry=${3:-} w=$out/$1
  rm -rf "$w"; mkdir -p "$w/roles"
  if [ -n "$entry" ]; then
    BRONZE_VERSION=$version "$ib/bundle.sh" "$entry" "$w/roles/main.cjs" > /dev/null
  else
    BRONZE_VERSION=$version "$ib/bundle.sh" --roles "$w/roles" > /dev/null
  fi
  "$ib/sea.sh" "$arch" "$w/roles" "$w/bronze" > /dev/null
  "$ib/rootfs.sh" "$arch" "$w/bronze" "$w/rootfs.sqsh" "$dir/bootloader" > /dev/null
  "$ib/verity.sh" "$w/rootfs.sqsh" "$w/roothash" > /dev/null
  "$ib/initramfs.sh" "$arch" "$w/rootfs.sqsh" "$w/initramfs.xz" > /dev/null
  cp "$dir/vmlinuz" "$w/vmlinuz"
  BRONZE_VERSION=$version "$ib/upgrade.sh" "$arch" "$w" "$w/upgrade.tar" > /dev/null
  if [ "$name" = next ] && [ "$arch" = amd64 ]; then
    cp "$dir/cmdline" "$w/cmdline"
    BRONZE_VERSION=$version "$ib/uki.sh" "$arch" "$w" "$w/bronze.efi" > /dev/null
    BRONZE_VERSION=$version "$ib/upgrade.sh" "$arch" "$w" "$w/secureboot-upgrade.tar" "$w/bronze.efi" > /dev/null
    rm -f "$w/bronze.efi" "$w/cmdline"
  fi
  rm -rf "$w/roles" "$w/bronze" "$w/rootfs.sqsh" "$w/rootfs.stage" "$w/rootfs.stage.pack"
  echo "test image: $w/upgrade.tar ($version, $(stat -c %s "$w/upgrade.tar") bytes)"
}
pids=()
for name in "${names[@]}"; do
  case $name in
    next) build next "$BRONZE_VERSION-next" & pids+=($!) ;;
    broken) build broken "$BRONZE_VERSION-broken" "$ROOT/test/fixtures/broken-machined.ts" & pids+=($!) ;;
    *) echo "test-images.sh: unknown test image '$name' (known: next, broken)" >&2; exit 2 ;;
  esac
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
exit $rc
