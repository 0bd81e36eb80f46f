#!/usr/bin/env bash
# Bronze's Secure Boot keys: prints the directory that holds them. That is
# $BRONZE_SECUREBOOT_KEYS when set (it must hold the files below), else a development set made
# at build time in _out/secureboot (never committed; `make clean` drops it, and a machine that
# enrolled the old set then refuses the new images until its keys are reset). The directory holds
#
#   PK.key PK.crt     the platform key (RSA 2048, self-signed X.509)
#   KEK.key KEK.crt   the key exchange key
#   db.key db.crt     the signature database key: it signs systemd-boot and the UKIs
#   PK.auth KEK.auth db.auth
#                     the EFI authenticated variables that enroll them (PK self-signed, KEK
#                     signed by PK, db by KEK): systemd-boot writes them into a firmware in
#                     setup mode (loader/keys/auto on the ESP)
#   guid              the owner GUID in the signature lists
#
# Only db.key/db.crt and the three .auth files are read by the build; PK.key and KEK.key are
# kept so that the set can be extended (another db entry, a dbx). With --cert, prints db.crt's
# path instead (the certificate the images are signed with).
#
# usage: image-builder/secureboot-keys.sh [--cert]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
want=dir
case ${1:-} in
  '') ;;
  --cert) want=cert ;;
  *) echo "usage: image-builder/secureboot-keys.sh [--cert]" >&2; exit 2 ;;
esac
need=(db.key db.crt PK.auth KEK.auth db.auth)
if [ -n "${BRONZE_SECUREBOOT_KEYS:-}" ]; then
  dir=$BRONZE_SECUREBOOT_KEYS
  for f in "${need[@]}"; do
    [ -f "$dir/$f" ] || { echo "secureboot-keys.sh: BRONZE_SECUREBOOT_KEYS=$dir has no $f" >&2; exit 1; }
  done
else
  dir=$ROOT/_out/secureboot
  if [ ! -f "$dir/db.auth" ]; then
    for tool in openssl cert-to-efi-sig-list sign-efi-sig-list; do
      command -v "$tool" >/dev/null || { echo "secureboot-keys.sh: $tool missing (apt-get install openssl efitools)" >&2; exit 1; }
    done
    # Made beside, then renamed: a concurrent build never reads half a set.
    tmp=$(mktemp -d "$(dirname "$dir")/secureboot.XXXXXX" 2>/dev/null || { mkdir -p "$(dirname "$dir")"; mktemp -d "$(dirname "$dir")/secureboot.XXXXXX"; })
    trap 'rm -rf "$tmp"' EXIT
    (
      cd "$tmp"
      umask 077
      guid=$(cat /proc/sys/kernel/random/uuid)
      echo "$guid" > guid
      for k in PK KEK db; do
        openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj "/CN=Bronze development Secure Boot $k/" \
          -keyout "$k.key" -out "$k.crt" 2>/dev/null
        cert-to-efi-sig-list -g "$guid" "$k.crt" "$k.esl" # PEM in: DER gives an empty list
        [ "$(stat -c %s "$k.esl")" -gt 100 ] || { echo "secureboot-keys.sh: $k.esl holds no certificate" >&2; exit 1; }
      done
      sign-efi-sig-list -g "$guid" -k PK.key -c PK.crt PK PK.esl PK.auth >/dev/null
      sign-efi-sig-list -g "$guid" -k PK.key -c PK.crt KEK KEK.esl KEK.auth >/dev/null
      sign-efi-sig-list -g "$guid" -k KEK.key -c KEK.crt db db.esl db.auth >/dev/null
      rm -f ./*.esl
    )
    mkdir -p "$(dirname "$dir")"
    if mv -T "$tmp" "$dir" 2>/dev/null; then
      trap - EXIT
      echo "secureboot-keys: made development Secure Boot keys in $dir" >&2
    fi
  fi
fi
case $want in
  dir) printf '%s\n' "$dir" ;;
  cert) printf '%s\n' "$dir/db.crt" ;;
esac
