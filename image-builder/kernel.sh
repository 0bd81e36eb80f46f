#!/usr/bin/env bash
# Builds the Bronze kernel for one architecture from Debian's linux-source-6.12 (arm64
# cross-compiled with gcc-aarch64-linux-gnu), with the config fragment in
# kernel-config/<arch>.config merged over the upstream defconfig and the kernel's own hardening
# fragments. Writes <outdir>/vmlinuz, kernel.config and cmdline (kernel-config/<arch>.cmdline,
# then the common kernel-config/cmdline).
#
# The result is cached outside the repository, keyed by what the kernel is made of: the source
# version, the resolved .config (defconfig + fragments, after olddefconfig), the compiler, and
# the build recipe below (make target, KBUILD_* stamps). So each architecture is rebuilt only
# when its own inputs change: an edit to this script or to the other architecture's fragment
# that leaves this arch's .config as it was costs only the few seconds of resolving it. A small
# memo (keys/) maps the raw inputs (source version, fragment, this script, compiler, linker) to that
# key, so an unchanged tree skips even that. The object tree is kept per architecture, so a
# changed fragment rebuilds incrementally. A fragment value the resolved .config does not
# honour (a dependency missing, a typo) fails the build, naming it.
#
# usage: image-builder/kernel.sh <arch> <outdir>    (arch: amd64, arm64)
set -euo pipefail
ARCH_NAME=${1:?arch}; OUT=${2:?outdir}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${BRONZE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bronze}/kernel
SRC_TAR=/usr/src/linux-source-6.12.tar.xz
FRAG=$ROOT/kernel-config/$ARCH_NAME.config

case $ARCH_NAME in
  amd64) KARCH=x86; DEFCONFIG=x86_64_defconfig; IMAGE=arch/x86/boot/bzImage; CROSS= ;
         EXTRA_FRAGS="kernel/configs/hardening.config arch/x86/configs/hardening.config" ;;
  # The uncompressed Image: QEMU's -kernel and GRUB's arm64-efi `linux` both load it as it is
  # (an EFI application through its PE/COFF header under UEFI).
  arm64) KARCH=arm64; DEFCONFIG=defconfig; IMAGE=arch/arm64/boot/Image; CROSS=aarch64-linux-gnu- ;
         EXTRA_FRAGS="kernel/configs/hardening.config arch/arm64/configs/hardening.config arch/arm64/configs/virt.config" ;;
  *) echo "kernel.sh: unsupported arch '$ARCH_NAME' (supported: amd64, arm64)" >&2; exit 2 ;;
esac
[ -f "$SRC_TAR" ] || { echo "kernel.sh: $SRC_TAR missing (apt-get install linux-source-6.12)" >&2; exit 1; }
[ -f "$FRAG" ] || { echo "kernel.sh: $FRAG missing" >&2; exit 1; }
command -v "${CROSS}gcc" >/dev/null || { echo "kernel.sh: ${CROSS}gcc missing (scripts/deps.sh installs it)" >&2; exit 1; }
for f in "$ROOT/kernel-config/cmdline" "$ROOT/kernel-config/$ARCH_NAME.cmdline"; do
  [ -f "$f" ] || { echo "kernel.sh: $f missing" >&2; exit 1; }
done

srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
ccver=$("${CROSS}gcc" --version | head -1)
# The assembler and linker: the resolved .config records their versions (CONFIG_AS_VERSION,
# CONFIG_LD_VERSION), so they are in the key; here only for the memo, so that a new binutils
# resolves the .config again instead of trusting an old memo.
ldver=$("${CROSS}ld" --version | head -1)
export KBUILD_BUILD_USER=bronze KBUILD_BUILD_HOST=bronze KBUILD_BUILD_TIMESTAMP="1970-01-01 00:00:00 UTC" KBUILD_BUILD_VERSION=1
# Everything about the build besides the .config and the source: part of the key.
recipe="ARCH=$KARCH CROSS_COMPILE=$CROSS target=${IMAGE##*/} user=$KBUILD_BUILD_USER host=$KBUILD_BUILD_HOST time=$KBUILD_BUILD_TIMESTAMP version=$KBUILD_BUILD_VERSION"
mk() { make -s -C "$src" O="$1" ARCH=$KARCH ${CROSS:+CROSS_COMPILE=$CROSS} "${@:2}"; }

src=$CACHE/src-$srcver
unpack() {
  [ -f "$src/Makefile" ] && return
  echo "kernel: unpacking linux-source $srcver"
  rm -rf "$src.tmp"; mkdir -p "$src.tmp"
  tar -xf "$SRC_TAR" -C "$src.tmp" --strip-components=1
  mv "$src.tmp" "$src"
}

# resolve <dir>: defconfig + the fragments + olddefconfig in <dir>; fails on a fragment line
# the result does not honour.
resolve() {
  local dir=$1 frags=() f
  mkdir -p "$dir"
  mk "$dir" $DEFCONFIG
  for f in $EXTRA_FRAGS; do frags+=("$src/$f"); done
  (cd "$dir" && KCONFIG_CONFIG=.config ARCH=$KARCH "$src/scripts/kconfig/merge_config.sh" -m -O "$dir" .config "${frags[@]}" "$FRAG" >/dev/null)
  mk "$dir" olddefconfig
  local bad=() line name have
  while IFS= read -r line; do
    if [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set ]]; then
      name=${BASH_REMATCH[1]}
      have=$(grep -m1 "^$name=" "$dir/.config" || true)
      [ -z "$have" ] || bad+=("$name: asked unset, have $have")
    elif [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)= ]]; then
      name=${BASH_REMATCH[1]}
      have=$(grep -m1 -E "^$name=|^# $name is not set" "$dir/.config" || true)
      [ "$have" = "$line" ] || bad+=("$name: asked ${line#*=}, have ${have:-nothing (a dependency is missing)}")
    fi
  done < "$FRAG"
  if [ ${#bad[@]} -gt 0 ]; then
    echo "kernel.sh: kernel-config/$ARCH_NAME.config asks for what the resolved .config does not have:" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
}

mkdir -p "$OUT" "$CACHE/keys"
# One kernel build at a time in one cache (two would corrupt the shared source and object trees).
exec 9> "$CACHE/.lock"
flock -n 9 || { echo "kernel: waiting for another kernel build in $CACHE"; flock 9; }
memo=$CACHE/keys/$ARCH_NAME-$( { echo "$srcver"; cat "$FRAG" "$0"; echo "$ccver"; echo "$ldver"; } | sha256sum | cut -c1-16)
key=
[ -f "$memo" ] && key=$(cat "$memo")
if [ -z "$key" ] || [ ! -f "$CACHE/$ARCH_NAME-$key/vmlinuz" ]; then
  unpack
  cfgdir=$CACHE/config-$ARCH_NAME-$srcver
  resolve "$cfgdir"
  # Contents only (not paths): a clone elsewhere must find the same cache entry.
  key=$( { echo "$srcver"; echo "$ccver"; echo "$recipe"; grep -v '^#' "$cfgdir/.config"; } | sha256sum | cut -c1-16)
  echo "$key" > "$memo.tmp" && mv "$memo.tmp" "$memo"
fi
dest=$CACHE/$ARCH_NAME-$key
if [ -f "$dest/vmlinuz" ] && [ -f "$dest/kernel.config" ]; then
  echo "kernel: cached $dest"
else
  obj=$CACHE/build-$ARCH_NAME-$srcver
  mkdir -p "$obj"
  cp "$cfgdir/.config" "$obj/.config"
  mk "$obj" olddefconfig
  cmp -s <(grep -v '^#' "$cfgdir/.config") <(grep -v '^#' "$obj/.config") \
    || { echo "kernel.sh: the .config changed in $obj (olddefconfig): rebuild from an empty $obj" >&2; exit 1; }
  echo "kernel: building $ARCH_NAME ($srcver) in $obj with $(nproc) jobs"
  start=$(date +%s)
  mk "$obj" -j"$(nproc)" "${IMAGE##*/}"
  echo "kernel: $ARCH_NAME built in $(( $(date +%s) - start )) s"
  rm -rf "$dest.tmp"; mkdir -p "$dest.tmp"
  cp "$obj/$IMAGE" "$dest.tmp/vmlinuz"
  cp "$obj/.config" "$dest.tmp/kernel.config"
  rm -rf "$dest"; mv "$dest.tmp" "$dest"
fi
cp "$dest/vmlinuz" "$OUT/vmlinuz"
cp "$dest/kernel.config" "$OUT/kernel.config"
cat "$ROOT/kernel-config/$ARCH_NAME.cmdline" "$ROOT/kernel-config/cmdline" | grep -v '^#' | tr -s ' \n' ' ' | sed 's/^ //; s/ $//' > "$OUT/cmdline"
echo >> "$OUT/cmdline"
