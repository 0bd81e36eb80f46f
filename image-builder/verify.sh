#!/usr/bin/env bash
# Verifies _out/SHA256SUMS.sig against a public key, then every checksum in it.
# usage: image-builder/verify.sh [outdir] [public-key.pem]
set -euo pipefail
out=${1:-_out}; pub=${2:-$out/signing-key.pub}
for f in "$out/SHA256SUMS" "$out/SHA256SUMS.sig" "$pub"; do
  [ -f "$f" ] || { echo "verify: $f missing" >&2; exit 1; }
done
if ! openssl pkeyutl -verify -pubin -inkey "$pub" -rawin -in "$out/SHA256SUMS" -sigfile "$out/SHA256SUMS.sig" >/dev/null 2>&1; then
  echo "verify: BAD signature on $out/SHA256SUMS (key $pub)" >&2; exit 1
fi
(cd "$out" && sha256sum --quiet -c SHA256SUMS) || { echo "verify: checksum mismatch" >&2; exit 1; }
echo "verify: signature OK, $(wc -l < "$out/SHA256SUMS") artifacts match"
