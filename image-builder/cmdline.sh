#!/usr/bin/env bash
# Prints a boot's full kernel command line, on one line: the arguments of <cmdline file> (any
# bronze.roothash= in it left out) followed by bronze.roothash=<the root hash in <roothash file>>.
# The root hash file wins, so a command line copied from another build (a test image's, say)
# never boots with that build's root hash. The Makefile writes _out/<arch>/cmdline with it from
# the kernel's default (kernel.cmdline); iso.sh, pxe.sh and uki.sh make their boot entries with it.
#
# usage: image-builder/cmdline.sh <cmdline file> <roothash file>
set -euo pipefail
file=${1:?cmdline file}; hashfile=${2:?roothash file}
for f in "$file" "$hashfile"; do [ -f "$f" ] || { echo "cmdline.sh: $f missing" >&2; exit 1; }; done
hash=$(tr -d ' \n' < "$hashfile")
[[ $hash =~ ^[0-9a-f]{64}$ ]] || { echo "cmdline.sh: $hashfile is not a root hash (64 hex digits)" >&2; exit 1; }
set -f # the arguments are words, never file patterns
args=()
for a in $(tr -s ' \n' ' ' < "$file"); do
  case $a in bronze.roothash=*) ;; *) args+=("$a") ;; esac
done
printf '%s\n' "${args[*]} bronze.roothash=$hash" | sed 's/^ //'
