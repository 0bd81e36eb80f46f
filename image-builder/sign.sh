#!/usr/bin/env bash
# Writes _out/SHA256SUMS over every artifact and signs it with Ed25519 (SHA256SUMS.sig, raw
# signature), with the key image-builder/signing-key.sh names ($BRONZE_SIGNING_KEY, else the
# development key). The public key is published as _out/signing-key.pub for
# `image-builder/verify.sh`.
# usage: image-builder/sign.sh <outdir>
set -euo pipefail
out=${1:?outdir}
key=$("$(dirname "$0")/signing-key.sh")
"$(dirname "$0")/signing-key.sh" --public "$out/signing-key.pub"
# The artifacts are the per-architecture directories (amd64/, arm64/), less build scratch.
archs=$(cd "$out" && ls -d amd64 arm64 2>/dev/null || true)
[ -n "$archs" ] || { echo "sign.sh: no artifacts in $out" >&2; exit 1; }
(cd "$out" && find $archs -type f ! -path '*.stage*' ! -name '*.sock' \
  | LC_ALL=C sort | xargs sha256sum > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
openssl pkeyutl -sign -inkey "$key" -rawin -in "$out/SHA256SUMS" -out "$out/SHA256SUMS.sig"
echo "sign: $(wc -l < "$out/SHA256SUMS") artifacts in $out/SHA256SUMS, signed"
