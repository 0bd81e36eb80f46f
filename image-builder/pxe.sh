#!/usr/bin/env bash
# Builds the network boot assets in <out dir> (served as they are by a TFTP or HTTP server):
#
#   vmlinuz, initramfs.xz   the kernel and initramfs
#   cmdline                 the default kernel command line, with the rootfs's root hash
#   boot.ipxe               an iPXE script: kernel + initrd + command line, from its own URL
#
# boot.ipxe loads vmlinuz and initramfs.xz relative to where it was loaded from (tftp:// or
# http://), so the directory can be served anywhere. The machine configuration URL comes from
# the iPXE setting `bronze-config`: set it in a script that chains this one,
#
#     #!ipxe
#     set bronze-config http://10.0.0.1/configs/${mac:hexhyp}.yaml
#     chain tftp://10.0.0.1/boot.ipxe
#
# (iPXE expands ${...} there: ${uuid} and ${mac} are the machine's, as Bronze would put them),
# or at the iPXE shell (ctrl-b, then `set bronze-config <url>` and `chain boot.ipxe`). With it,
# boot.ipxe adds `ip=dhcp bronze.config=<url>` to the command line (the kernel brings the
# network up before machined fetches the URL); without it the node boots into maintenance
# mode. The setting `bronze-args` adds any other kernel arguments.
#
# usage: image-builder/pxe.sh <arch> <artifact dir (vmlinuz, initramfs.xz, cmdline)> <out dir>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
arch=${1:?arch}; dir=${2:?artifact dir}; out=${3:?out dir}
case $arch in
  amd64 | arm64) ;;
  *) echo "pxe.sh: unsupported arch '$arch'" >&2; exit 2 ;;
esac
for f in vmlinuz initramfs.xz cmdline roothash; do
  [ -f "$dir/$f" ] || { echo "pxe.sh: $dir/$f missing" >&2; exit 1; }
done
cmdline=$("$ROOT/image-builder/cmdline.sh" "$dir/cmdline" "$dir/roothash")
case $cmdline in *[\$\;\&\|\`]*) echo "pxe.sh: the command line may not contain \$ ; & | or \`" >&2; exit 1 ;; esac

tmp=$out.tmp
rm -rf "$tmp"; mkdir -p "$tmp"
cp "$dir/vmlinuz" "$dir/initramfs.xz" "$tmp/"
printf '%s\n' "$cmdline" > "$tmp/cmdline"
cat > "$tmp/boot.ipxe" <<EOF
#!ipxe
# Bronze $BRONZE_VERSION ($BRONZE_SHA): network boot. The kernel and initramfs are loaded from
# beside this script. Settings read here (set them before chaining this script):
#   bronze-config  URL of the machine configuration (http or https): the node boots with
#                  ip=dhcp bronze.config=<url>; unset: maintenance mode
#   bronze-args    more kernel arguments
echo Bronze $BRONZE_VERSION: loading the kernel and initramfs
isset \${bronze-config} && set bronze-cfgarg ip=dhcp bronze.config=\${bronze-config} || clear bronze-cfgarg
kernel vmlinuz initrd=initramfs.xz $cmdline \${bronze-cfgarg} \${bronze-args}
initrd initramfs.xz
boot
EOF
touch -d "@$SOURCE_DATE_EPOCH" "$tmp"/*
rm -rf "$out"; mv "$tmp" "$out"
echo "pxe: $out ($(du -sk "$out" | cut -f1) KiB: $(cd "$out" && ls | tr '\n' ' '))"
