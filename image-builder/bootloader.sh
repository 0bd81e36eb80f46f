#!/usr/bin/env bash
# Builds GRUB for an installed Bronze disk, once, as files that are copied byte for byte onto
# every disk: by image-builder/disk.sh (disk.raw) and by machined's installer on a node (they
# travel in the rootfs under /usr/share/bronze/bootloader). Output directory:
#
#   mbr.bin     440 bytes: GRUB's boot.img for the MBR's boot-code area (the partition table
#               after it belongs to the GPT's protective MBR)                     (amd64 only)
#   bios.img    the BIOS boot partition (1 MiB): GRUB's i386-pc core image        (amd64 only)
#   efi.img     the EFI system partition (256 MiB vfat): EFI/BOOT/BOOTX64.EFI (amd64) or
#               EFI/BOOT/BOOTAA64.EFI (arm64)
#   boot-uuid   the filesystem UUID BOOT must be made with (mkfs.xfs -m uuid=...): the core
#               images find BOOT by it (search.fs_uuid), then load grub/ from there
#   grub/       BOOT's grub/ directory: the modules (i386-pc/ and x86_64-efi/, or arm64-efi/)
#               and grub.cfg
#   sdboot/     (amd64) for an install under Secure Boot, what goes on the ESP in GRUB's place:
#               BOOTX64.EFI (Debian's systemd-boot, signed with the Secure Boot db key) and
#               keys/{PK,KEK,db}.auth (image-builder/secureboot-keys.sh; systemd-boot enrolls
#               them into a firmware in setup mode). The installer adds loader.conf and the UKI.
#
# arm64 boots with UEFI only: its disks keep the same GPT (the BIOS boot partition stays empty,
# as the layout is one for every architecture) and get no MBR boot code.
#
# The core images are position-dependent: boot.img holds the BIOS boot partition's first
# sector and the core image its own sector list. They are made here on a scratch disk laid out
# exactly as src/disk/layout.ts lays out every disk (the same sgdisk command as disk.sh),
# where that partition starts at the same sector whatever the disk's size.
#
# BOOT's UUID is derived from the version, so that builds of one commit match; an upgrade
# keeps the GRUB of the install (it only replaces the slots), so a new UUID does no harm.
#
# usage: image-builder/bootloader.sh <arch> <artifact dir (kernel.cmdline)> <out dir>
#        BRONZE_DISK_TIMEOUT: GRUB menu seconds (default 2).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
. "$ROOT/image-builder/layout.sh"
arch=${1:?arch}; dir=${2:?artifact dir}; out=${3:?out dir}
case $arch in
  amd64) bios=1; efi_target=x86_64-efi; efi_name=BOOTX64.EFI ;;
  arm64) bios=; efi_target=arm64-efi; efi_name=BOOTAA64.EFI ;;
  *) echo "bootloader.sh: unsupported arch '$arch'" >&2; exit 2 ;;
esac
[ -f "$dir/kernel.cmdline" ] || { echo "bootloader.sh: $dir/kernel.cmdline missing" >&2; exit 1; }
[ -d "/usr/lib/grub/$efi_target" ] || { echo "bootloader.sh: /usr/lib/grub/$efi_target missing (scripts/deps.sh installs GRUB for it)" >&2; exit 1; }
for tool in sgdisk losetup mkfs.vfat mkfs.xfs mmd mcopy grub-install grub-mkimage; do
  command -v "$tool" >/dev/null || { echo "bootloader.sh: $tool missing (scripts/deps.sh installs it)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "bootloader.sh: needs root (loop devices, mounts)" >&2; exit 1; }

# The kernel's default command line, without a root hash: GRUB adds each slot's own
# (A/roothash.env), so the disks' grub.cfg is the same whatever the rootfs.
cmdline=$(tr -s ' \n' ' ' < "$dir/kernel.cmdline" | sed 's/ *$//')
case $cmdline in *[\"\\\$\;\&\|\`]*) echo "bootloader.sh: the command line may not contain \" \\ \$ ; & | or \`" >&2; exit 1 ;; esac

# What disk.cfg runs (serial, terminal_*, all_video, load_env/save_env, echo, [ ], menuentry,
# linux, initrd) and the core images' own (part_gpt, xfs, search_fs_uuid); then, for the GRUB
# prompt, the usual inspection and power commands.
GRUB_MODULES="normal linux loadenv echo test serial terminal all_video search search_fs_uuid part_gpt xfs
  minicmd halt reboot sleep configfile cat ls help"
# grub_module_closure <moddep.lst> <module...>: the modules and all they depend on, one per
# line; fails naming a module the platform does not have.
grub_module_closure() {
  local lst=$1; shift
  awk -v seeds="$*" '
    { name = $1; sub(/:$/, "", name); have[name] = 1; deps[name] = ""
      for (i = 2; i <= NF; i++) deps[name] = deps[name] " " $i }
    END {
      n = split(seeds, q, " ")
      for (i = 1; i <= n; i++) {
        if (!(q[i] in have)) { printf "bootloader.sh: GRUB has no module %s (%s)\n", q[i], FILENAME > "/dev/stderr"; bad = 1 }
        want[q[i]] = 1
      }
      if (bad) exit 1
      for (grew = 1; grew; ) {
        grew = 0
        for (m in want) { k = split(deps[m], d, " "); for (j = 1; j <= k; j++) if (!(d[j] in want)) { want[d[j]] = 1; grew = 1 } }
      }
      for (m in want) print m
    }' "$lst"
}
tmp=$out.tmp
work=$(mktemp -d "${TMPDIR:-/tmp}/bronze-bootloader.XXXXXX")
loops=()
cleanup() {
  local rc=$?
  mountpoint -q "$work/boot" && umount "$work/boot"
  for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
  rm -rf "$work"
  [ $rc = 0 ] || rm -rf "$tmp"
  return $rc
}
trap cleanup EXIT
rm -rf "$tmp"; mkdir -p "$tmp"

# A version-derived UUID (v4 layout): same version, same bytes.
h=$(printf 'bronze-boot %s' "$BRONZE_VERSION" | sha256sum | cut -c1-32)
uuid="${h:0:8}-${h:8:4}-4${h:13:3}-a${h:17:3}-${h:20:12}"
echo "$uuid" > "$tmp/boot-uuid"

disk=$work/disk.raw
truncate -s 1700M "$disk"
gpt_layout "$disk"
[ "$(first_sector "$disk" 2)" = 526336 ] || { echo "bootloader.sh: the BIOS boot partition moved (sector $(first_sector "$disk" 2), not 526336): src/disk/layout.ts must agree" >&2; exit 1; }
whole=$(losetup --find --show "$disk"); loops+=("$whole")
boot=$(losetup --find --show --offset $(($(first_sector "$disk" 3) * 512)) --sizelimit "$(part_bytes "$disk" 3)" "$disk"); loops+=("$boot")
mkfs.xfs -q -f -L BOOT -m uuid="$uuid" "$boot"
mkdir -p "$work/boot"
mount -t xfs "$boot" "$work/boot"

if [ -n "$bios" ]; then
  # BIOS: boot.img into the MBR, the core image into the BIOS boot partition; the modules to
  # BOOT/grub/i386-pc. The core image's load.cfg searches BOOT by the UUID above.
  grub-install --target=i386-pc --boot-directory="$work/boot" --locales= --fonts= --themes= \
    --modules="part_gpt xfs" "$whole" 2> "$work/grub.log" \
    || { cat "$work/grub.log" >&2; exit 1; }
  grep -q "$uuid" "$work/boot/grub/i386-pc/load.cfg" || { echo "bootloader.sh: GRUB's core image does not search for $uuid" >&2; exit 1; }
fi
# UEFI: what `grub-install --target=<x86_64|arm64>-efi --removable` does, by hand (grub-install
# insists on probing a mounted ESP, and the build kernel may have no vfat): the modules to
# BOOT, the core image (same load.cfg) to the ESP's removable-media path.
efimods=/usr/lib/grub/$efi_target
mkdir -p "$work/boot/grub/$efi_target"
cp "$efimods"/*.mod "$efimods"/*.lst "$work/boot/grub/$efi_target/"
printf "search.fs_uuid %s root\nset prefix=(\$root)'/grub'\n" "$uuid" > "$work/boot/grub/$efi_target/load.cfg"
grub-mkimage --format="$efi_target" --directory="$efimods" --prefix= \
  --config="$work/boot/grub/$efi_target/load.cfg" --output="$work/boot.efi" \
  part_gpt xfs search_fs_uuid
truncate -s "$(part_bytes "$disk" 1)" "$tmp/efi.img"
# Hidden sectors = the partition's start (it belongs in the boot sector); a fixed volume id
# and --invariant for the same bytes from the same inputs.
mkfs.vfat -F 32 -g 255/63 -h "$(first_sector "$disk" 1)" -n EFI -i 42524f4e --invariant "$tmp/efi.img" > /dev/null
touch -d "@$SOURCE_DATE_EPOCH" "$work/boot.efi"
mmd -i "$tmp/efi.img" ::/EFI ::/EFI/BOOT
mcopy -m -i "$tmp/efi.img" "$work/boot.efi" "::/EFI/BOOT/$efi_name"

sed -e "s|@VERSION@|$BRONZE_VERSION|g" -e "s|@CMDLINE@|$cmdline|g" -e "s|@TIMEOUT@|${BRONZE_DISK_TIMEOUT:-2}|g" \
  "$ROOT/image-builder/grub/disk.cfg" > "$work/boot/grub/grub.cfg"
rm -rf "$work/boot/grub/fonts" "$work/boot/grub/locale" "$work/boot/grub/grubenv"
# Only the modules grub.cfg can reach: grub-install (and the copy above) bring all ~270 of a
# platform (5.6 MB for amd64's two, in every rootfs for the installer), while disk.cfg uses a
# few commands. GRUB_MODULES are its commands' modules and what an operator needs at GRUB's
# own prompt; GRUB loads the rest of a module's needs itself, so keep their closure under
# moddep.lst (no GRUB tool computes it). The *.lst files stay: a command whose module is
# gone then fails with GRUB's "file not found", nothing else.
for platform_dir in "$work"/boot/grub/*/; do
  [ -f "$platform_dir/moddep.lst" ] || continue
  keep=$(grub_module_closure "$platform_dir/moddep.lst" $GRUB_MODULES) || exit 1
  for m in "$platform_dir"*.mod; do
    grep -qxF "$(basename "$m" .mod)" <<< "$keep" || rm "$m"
  done
done
cp -r "$work/boot/grub" "$tmp/grub"
umount "$work/boot"

if [ -n "$bios" ]; then
  dd if="$whole" of="$tmp/mbr.bin" bs=440 count=1 status=none
  dd if="$whole" of="$tmp/bios.img" bs=512 skip="$(first_sector "$disk" 2)" count=$(($(part_bytes "$disk" 2) / 512)) status=none
fi
if [ "$arch" = amd64 ]; then
  sdboot=/usr/lib/systemd/boot/efi/systemd-bootx64.efi
  [ -f "$sdboot" ] || { echo "bootloader.sh: $sdboot missing (apt-get install systemd-boot-efi)" >&2; exit 1; }
  keys=$("$ROOT/image-builder/secureboot-keys.sh")
  mkdir -p "$tmp/sdboot/keys"
  sbsign --key "$keys/db.key" --cert "$keys/db.crt" --output "$tmp/sdboot/BOOTX64.EFI" "$sdboot" 2> /dev/null
  for k in PK KEK db; do cp "$keys/$k.auth" "$tmp/sdboot/keys/$k.auth"; done
fi
find "$tmp" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
touch "$tmp/boot-uuid" # make's stamp for the directory: newer than its inputs
rm -rf "$out"; mv "$tmp" "$out"
echo "bootloader: $out (${bios:+BIOS and }UEFI GRUB for $arch, BOOT uuid $uuid)"
