#!/usr/bin/env bash
# Builds initramfs.xz: the static preinit as /init and rootfs.sqsh, as a reproducible newc
# cpio. Its name is kept (as Talos keeps initramfs.xz), but since the squashfs inside is
# compressed already, the cpio is framed with fast zstd rather than xz: the kernel unpacked the
# xz in 1.46 s under QEMU/TCG (its "Unpacking initramfs" to "Freeing initrd memory"), for
# nothing gained in size. The kernel reads the format from the magic bytes (CONFIG_RD_ZSTD).
# usage: image-builder/initramfs.sh <arch> <rootfs.sqsh> <out.xz>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
. "$ROOT/image-builder/arch.sh"
arch=${1:?arch}; sqsh=${2:?rootfs}; out=${3:?out}
# preinit is the same C for every arch, static: for arm64 from the cross compiler.
arch_setup "$arch" || { echo "initramfs.sh: see above" >&2; exit 2; }
command -v "$TARGET_CC" >/dev/null || { echo "initramfs.sh: $TARGET_CC missing (scripts/deps.sh installs it)" >&2; exit 1; }
work=$(dirname "$out")/initramfs.stage
rm -rf "$work"; mkdir -p "$work/dev" "$work/newroot"
$TARGET_CC -static -Os -Wall -Wextra -Werror -o "$work/init" "$ROOT/image-builder/preinit/preinit.c"
$TARGET_STRIP "$work/init"
cp "$sqsh" "$work/rootfs.sqsh"
find "$work" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
(cd "$work" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc --owner=0:0 --reproducible) \
  | zstd -q -3 -T1 --no-check > "$out.tmp"
mv "$out.tmp" "$out"
rm -rf "$work"
echo "initramfs: $out ($(stat -c %s "$out") bytes)"
