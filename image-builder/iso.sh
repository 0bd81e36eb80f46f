#!/usr/bin/env bash
# Builds bronze.iso: a hybrid ISO 9660 image (CD, USB stick, or a VM's CD-ROM) that boots with
# BIOS (El Torito + MBR, GRUB i386-pc) and UEFI (an EFI system partition image holding GRUB
# x86_64-efi); for arm64, UEFI only (GRUB arm64-efi); made by grub-mkrescue through xorriso.
# grub-mkrescue puts in every GRUB platform installed under /usr/lib/grub (it takes one
# --directory at most): when other platforms are installed (this host builds both arches), it
# runs in a private mount namespace that shows it only the arch's own (needs root). GRUB's menu (image-builder/grub/iso.cfg)
# has one entry: the kernel, the initramfs and the command line (<dir>/cmdline with <dir>/roothash:
# image-builder/cmdline.sh), plus
# $BRONZE_ISO_APPEND when set. Without bronze.config= the node comes up in maintenance mode;
# grub/iso.cfg says how to add the argument at the menu.
#
# Reproducible: the same inputs and SOURCE_DATE_EPOCH give the same bytes. The staged files
# get that mtime; xorriso follows SOURCE_DATE_EPOCH and is told to stamp every file with it;
# grub-mkrescue (which dates the volume, and its boot images search for the volume by that
# date) and mtools (the UEFI FAT image's dates and serial) run under faketime with the clock
# frozen at SOURCE_DATE_EPOCH. Without faketime the ISO still works but carries today's date.
#
# usage: image-builder/iso.sh <arch> <artifact dir (vmlinuz, initramfs.xz, cmdline)> <out.iso>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
arch=${1:?arch}; dir=${2:?artifact dir}; out=${3:?out.iso}
case $arch in
  amd64) platforms=(i386-pc x86_64-efi) ;;
  arm64) platforms=(arm64-efi) ;;
  *) echo "iso.sh: unsupported arch '$arch'" >&2; exit 2 ;;
esac
for f in vmlinuz initramfs.xz cmdline roothash; do
  [ -f "$dir/$f" ] || { echo "iso.sh: $dir/$f missing" >&2; exit 1; }
done
for tool in grub-mkrescue xorriso mformat; do
  command -v "$tool" >/dev/null || { echo "iso.sh: $tool missing (scripts/deps.sh installs it)" >&2; exit 1; }
done
for p in "${platforms[@]}"; do
  [ -d "/usr/lib/grub/$p" ] || { echo "iso.sh: /usr/lib/grub/$p missing (grub-pc-bin, grub-efi-amd64-bin, grub-efi-arm64-bin: scripts/deps.sh)" >&2; exit 1; }
done
# The platforms installed that this ISO must not carry.
others=()
for d in /usr/lib/grub/*/; do
  p=$(basename "$d")
  [ -f "$d/modinfo.sh" ] || continue # a platform directory, not grub-mkconfig_lib
  [[ " ${platforms[*]} " == *" $p "* ]] || others+=("$p")
done

cmdline=$("$ROOT/image-builder/cmdline.sh" "$dir/cmdline" "$dir/roothash")
[ -n "${BRONZE_ISO_APPEND:-}" ] && cmdline="$cmdline $BRONZE_ISO_APPEND"
case $cmdline in *[\"\\\$\;\&\|\`]*) echo "iso.sh: the command line may not contain \" \\ \$ ; & | or \`" >&2; exit 1 ;; esac

stage=$(dirname "$out")/iso.stage
rm -rf "$stage"; mkdir -p "$stage/boot/grub"
cp "$dir/vmlinuz" "$dir/initramfs.xz" "$dir/roothash" "$stage/boot/"
sed -e "s|@VERSION@|$BRONZE_VERSION|g" -e "s|@CMDLINE@|$cmdline|g" -e "s|@TIMEOUT@|${BRONZE_ISO_TIMEOUT:-3}|g" \
  "$ROOT/image-builder/grub/iso.cfg" > "$stage/boot/grub/grub.cfg"
find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

rm -f "$out.tmp"
# grub-mkrescue stamps the ISO with the current time (the volume's "uuid", which its own
# boot images search for) and mtools dates the UEFI FAT image from the clock: under
# faketime, stopped at SOURCE_DATE_EPOCH, both are fixed too.
faketime=()
if command -v faketime >/dev/null; then
  faketime=(env TZ=UTC faketime -f "$(date -u -d "@$SOURCE_DATE_EPOCH" '+%Y-%m-%d %H:%M:%S')")
else
  echo "iso: faketime missing: the ISO will carry today's date (apt-get install faketime)" >&2
fi
# Only what the menu needs: no locales, fonts or themes (serial and text consoles).
# After `--`, native xorriso commands: the volume id (the filesystem label).
mkrescue=("${faketime[@]}" grub-mkrescue --output="$out.tmp" --compress=xz --locales= --fonts= --themes=
  --product-name=Bronze --product-version="$BRONZE_VERSION"
  "$stage" -- -volid BRONZE -volume_date all_file_dates "=$SOURCE_DATE_EPOCH")
if [ ${#others[@]} -eq 0 ]; then
  "${mkrescue[@]}" 2> "$stage.log" || { cat "$stage.log" >&2; rm -f "$out.tmp"; exit 1; }
else
  [ "$(id -u)" = 0 ] || { echo "iso.sh: GRUB for ${others[*]} is installed too: hiding it from grub-mkrescue needs root" >&2; exit 1; }
  # /usr/lib/grub with only this arch's platforms, over the real one, in this command's own
  # mount namespace (nothing outside it sees the change; it ends with the command).
  grubdir=$stage.grub
  mkdir -p "$grubdir"
  for p in "${platforms[@]}"; do cp -a "/usr/lib/grub/$p" "$grubdir/"; done
  unshare --mount --propagation private -- bash -c 'mount --bind "$1" /usr/lib/grub && shift && exec "$@"' _ "$grubdir" "${mkrescue[@]}" 2> "$stage.log" \
    || { cat "$stage.log" >&2; rm -f "$out.tmp"; exit 1; }
  rm -rf "$grubdir"
fi
mv "$out.tmp" "$out"
rm -rf "$stage" "$stage.log"
echo "iso: $out ($(stat -c %s "$out") bytes; $arch, $( [ "$arch" = amd64 ] && echo 'BIOS and UEFI' || echo UEFI))"
