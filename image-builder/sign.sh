#!/usr/bin/env bash
# Writes _out/SHA256SUMS over every artifact and signs it with Ed25519 (SHA256SUMS.sig, raw
# signature). The key is $BRONZE_SIGNING_KEY (PEM); when unset, a development key kept at
# ~/.config/bronze/dev-signing-key.pem is used, and made if missing. The public key is
# published as _out/signing-key.pub for `image-builder/verify.sh`.
# usage: image-builder/sign.sh <outdir>
set -euo pipefail
out=${1:?outdir}
key=${BRONZE_SIGNING_KEY:-${XDG_CONFIG_HOME:-$HOME/.config}/bronze/dev-signing-key.pem}
if [ ! -f "$key" ]; then
  if [ -n "${BRONZE_SIGNING_KEY:-}" ]; then echo "sign.sh: BRONZE_SIGNING_KEY=$key does not exist" >&2; exit 1; fi
  mkdir -p "$(dirname "$key")"
  (umask 077; openssl genpkey -algorithm ed25519 -out "$key")
  echo "sign: made development key $key"
fi
openssl pkey -in "$key" -pubout -out "$out/signing-key.pub"
# The artifacts are the per-architecture directories (amd64/, arm64/), less build scratch.
archs=$(cd "$out" && ls -d amd64 arm64 2>/dev/null || true)
[ -n "$archs" ] || { echo "sign.sh: no artifacts in $out" >&2; exit 1; }
(cd "$out" && find $archs -type f ! -path '*.stage*' ! -name '*.sock' \
  | LC_ALL=C sort | xargs sha256sum > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
openssl pkeyutl -sign -inkey "$key" -rawin -in "$out/SHA256SUMS" -out "$out/SHA256SUMS.sig"
echo "sign: $(wc -l < "$out/SHA256SUMS") artifacts in $out/SHA256SUMS, signed"
