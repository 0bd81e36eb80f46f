# shellcheck shell=bash
# The installed disk's GPT, for the image-builder scripts (sourced): the one place the shell
# side lays it out. src/disk/layout.ts is the same layout for machined's installer; its
# test compares the two (it reads the sgdisk command below).
#
#   1 EFI        256 MiB  EF00   vfat (EFI/BOOT/BOOTX64.EFI; under Secure Boot, systemd-boot and
#                                the two slots' signed UKIs, some 57 MiB each)
#   2 BIOS         1 MiB  EF02   GRUB's i386-pc core image
#   3 BOOT       844 MiB  8300   xfs: A/, B/, grub/ (ends at 1102 MiB, as it did at 1000 MiB
#                                after a 100 MiB EFI: META and after keep their places)
#   4 META         1 MiB  8300   key-value store (src/install/meta.ts)
#   5 STATE      100 MiB  8300   xfs: the machine configuration
#   6 EPHEMERAL  the rest 8300   xfs: /var

# gpt_layout <image file>: writes the GPT (the file must already have its size).
gpt_layout() {
  sgdisk --clear \
    --new=1:1MiB:+256MiB --typecode=1:EF00 --change-name=1:EFI \
    --new=2:0:+1MiB --typecode=2:EF02 --change-name=2:BIOS \
    --new=3:0:+844MiB --typecode=3:8300 --change-name=3:BOOT \
    --new=4:0:+1MiB --typecode=4:8300 --change-name=4:META \
    --new=5:0:+100MiB --typecode=5:8300 --change-name=5:STATE \
    --new=6:0:0 --typecode=6:8300 --change-name=6:EPHEMERAL \
    "$1" > /dev/null
}
# first_sector/last_sector <image> <partition number>; part_bytes <image> <n>: its size.
first_sector() { sgdisk --info="$2" "$1" | sed -n 's/^First sector: \([0-9]*\).*/\1/p'; }
last_sector() { sgdisk --info="$2" "$1" | sed -n 's/^Last sector: \([0-9]*\).*/\1/p'; }
part_bytes() { echo $(( ($(last_sector "$1" "$2") - $(first_sector "$1" "$2") + 1) * 512 )); }
