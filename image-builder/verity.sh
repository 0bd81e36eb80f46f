#!/usr/bin/env bash
# Makes rootfs.sqsh verifiable with dm-verity: appends the hash tree to the squashfs, in place,
# and writes the root hash. The file becomes
#
#   [squashfs, zero-padded to 4 KiB][veritysetup superblock, 4 KiB][hash tree]
#
# (veritysetup format, SHA-256, 4 KiB data and hash blocks). preinit finds the superblock at
# the squashfs's end (its bytes_used, rounded up to 4 KiB) and sets up the verity target with
# the root hash from the kernel argument bronze.roothash=; the boot media carry that argument
# (the root hash file this script writes). Re-running on a file that already has a tree
# first cuts it off again, so the result depends only on the squashfs.
#
# Reproducible: the salt is the SHA-256 of the padded squashfs and the superblock's UUID is
# derived from it (veritysetup would pick both at random).
#
# usage: image-builder/verity.sh <rootfs.sqsh> <roothash out>
set -euo pipefail
sqsh=${1:?rootfs.sqsh}; out=${2:?roothash out}
command -v veritysetup >/dev/null || { echo "verity.sh: veritysetup missing (apt-get install cryptsetup-bin)" >&2; exit 1; }
[ "$(head -c 4 "$sqsh")" = hsqs ] || { echo "verity.sh: $sqsh is not a squashfs" >&2; exit 1; }

# bytes_used: little-endian u64 at offset 40 of the squashfs superblock.
used=$(od -An -t u8 -j 40 -N 8 --endian=little "$sqsh" | tr -d ' ')
size=$(( (used + 4095) / 4096 * 4096 ))
truncate -s "$size" "$sqsh"
salt=$(sha256sum < "$sqsh" | cut -c1-64)
uuid="${salt:0:8}-${salt:8:4}-4${salt:13:3}-8${salt:17:3}-${salt:20:12}"
report=$(veritysetup format --hash sha256 --data-block-size 4096 --hash-block-size 4096 \
  --data-blocks $((size / 4096)) --hash-offset "$size" --salt "$salt" --uuid "$uuid" "$sqsh" "$sqsh")
root=$(sed -n 's/^Root hash:[[:space:]]*\([0-9a-f]\{64\}\)$/\1/p' <<< "$report")
[ -n "$root" ] || { echo "verity.sh: no root hash in veritysetup's report:" >&2; echo "$report" >&2; exit 1; }
printf '%s\n' "$root" > "$out.tmp" && mv "$out.tmp" "$out"
echo "verity: $sqsh: $((size / 4096)) data blocks, hash tree $(( $(stat -c %s "$sqsh") - size )) bytes, root hash $root"
