#!/usr/bin/env bash
# Builds the Bronze kernel for one architecture from Debian's linux-source-6.12, with the
# config fragment in kernel-config/<arch>.config merged over the upstream defconfig and the
# kernel's own hardening fragments. The result is cached outside the repository, keyed by
# every input (source tarball, fragment, this script, compiler), so only the first build on
# a machine pays for it. The object tree is kept too, so a changed fragment rebuilds
# incrementally.
#
# usage: image-builder/kernel.sh <arch> <outdir>    (arch: amd64)
set -euo pipefail
ARCH_NAME=${1:?arch}; OUT=${2:?outdir}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${BRONZE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bronze}/kernel
SRC_TAR=/usr/src/linux-source-6.12.tar.xz
FRAG=$ROOT/kernel-config/$ARCH_NAME.config

case $ARCH_NAME in
  amd64) KARCH=x86; DEFCONFIG=x86_64_defconfig; IMAGE=arch/x86/boot/bzImage; CROSS= ;
         EXTRA_FRAGS="kernel/configs/hardening.config arch/x86/configs/hardening.config" ;;
  *) echo "kernel.sh: unsupported arch '$ARCH_NAME' (supported: amd64)" >&2; exit 2 ;;
esac
[ -f "$SRC_TAR" ] || { echo "kernel.sh: $SRC_TAR missing (apt-get install linux-source-6.12)" >&2; exit 1; }
[ -f "$FRAG" ] || { echo "kernel.sh: $FRAG missing" >&2; exit 1; }

srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
# Contents only (not paths): a clone elsewhere must find the same cache entry.
key=$( { echo "$srcver"; cat "$FRAG" "$0"; ${CROSS}gcc --version | head -1; } | sha256sum | cut -c1-16)
dest=$CACHE/$ARCH_NAME-$key
mkdir -p "$OUT"
if [ -f "$dest/vmlinuz" ] && [ -f "$dest/kernel.config" ]; then
  echo "kernel: cached $dest"
else
  src=$CACHE/src-$srcver
  if [ ! -f "$src/Makefile" ]; then
    echo "kernel: unpacking linux-source $srcver"
    rm -rf "$src.tmp"; mkdir -p "$src.tmp"
    tar -xf "$SRC_TAR" -C "$src.tmp" --strip-components=1
    mv "$src.tmp" "$src"
  fi
  obj=$CACHE/build-$ARCH_NAME-$srcver
  mkdir -p "$obj"
  export KBUILD_BUILD_USER=bronze KBUILD_BUILD_HOST=bronze KBUILD_BUILD_TIMESTAMP="1970-01-01 00:00:00 UTC" KBUILD_BUILD_VERSION=1
  mk() { make -s -C "$src" O="$obj" ARCH=$KARCH ${CROSS:+CROSS_COMPILE=$CROSS} "$@"; }
  mk $DEFCONFIG
  frags=(); for f in $EXTRA_FRAGS; do frags+=("$src/$f"); done
  (cd "$obj" && KCONFIG_CONFIG=.config ARCH=$KARCH "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" .config "${frags[@]}" "$FRAG" >/dev/null)
  mk olddefconfig
  echo "kernel: building $ARCH_NAME ($srcver) in $obj with $(nproc) jobs"
  mk -j"$(nproc)" "${IMAGE##*/}"
  rm -rf "$dest.tmp"; mkdir -p "$dest.tmp"
  cp "$obj/$IMAGE" "$dest.tmp/vmlinuz"
  cp "$obj/.config" "$dest.tmp/kernel.config"
  rm -rf "$dest"; mv "$dest.tmp" "$dest"
fi
cp "$dest/vmlinuz" "$OUT/vmlinuz"
cp "$dest/kernel.config" "$OUT/kernel.config"
tr -s ' \n' ' ' < "$ROOT/kernel-config/cmdline" | sed 's/ $//' > "$OUT/cmdline"; echo >> "$OUT/cmdline"
