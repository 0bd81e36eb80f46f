#!/usr/bin/env bash
# The Ed25519 key that signs Bronze's artifacts and upgrade images: prints the path of the
# private key (PEM). That is $BRONZE_SIGNING_KEY when set (it must exist), else a development
# key kept at ${XDG_CONFIG_HOME:-~/.config}/bronze/dev-signing-key.pem, made on first use.
# With --public, writes the matching public key (PEM) to <out.pem> instead: the key a node
# trusts for upgrades, and the one `image-builder/verify.sh` checks SHA256SUMS against.
# usage: image-builder/signing-key.sh [--public <out.pem>]
set -euo pipefail
pubout=
case ${1:-} in
  '') ;;
  --public) pubout=${2:?usage: signing-key.sh --public <out.pem>} ;;
  *) echo "usage: image-builder/signing-key.sh [--public <out.pem>]" >&2; exit 2 ;;
esac
if [ -n "${BRONZE_SIGNING_KEY:-}" ]; then
  key=$BRONZE_SIGNING_KEY
  [ -f "$key" ] || { echo "signing-key.sh: BRONZE_SIGNING_KEY=$key does not exist" >&2; exit 1; }
else
  key=${XDG_CONFIG_HOME:-$HOME/.config}/bronze/dev-signing-key.pem
  if [ ! -f "$key" ]; then
    mkdir -p "$(dirname "$key")"
    # Made beside, then renamed: a concurrent build never reads half a key.
    (umask 077; openssl genpkey -algorithm ed25519 -out "$key.$$.tmp") && mv -n "$key.$$.tmp" "$key"
    rm -f "$key.$$.tmp"
    echo "signing-key: made development key $key" >&2
  fi
fi
if [ -n "$pubout" ]; then
  openssl pkey -in "$key" -pubout -out "$pubout.tmp" && mv "$pubout.tmp" "$pubout"
else
  printf '%s\n' "$key"
fi
