#!/usr/bin/env bash
# Bundles src/ into one CommonJS script (the single-executable's main) with esbuild.
# usage: image-builder/bundle.sh <entry.ts> <out.cjs>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
entry=${1:?entry}; out=${2:?out}
mkdir -p "$(dirname "$out")"
"$ROOT/node_modules/.bin/esbuild" "$entry" --bundle --platform=node --format=cjs --target=node20 \
  --loader:.proto=text --external:koffi --log-level=warning \
  --minify-syntax --minify-whitespace --keep-names --legal-comments=none \
  --define:__BRONZE_VERSION__="\"$BRONZE_VERSION\"" \
  --define:__BRONZE_SHA__="\"$BRONZE_SHA\"" \
  --define:__BRONZE_BUILT__="\"$BRONZE_BUILT\"" \
  --outfile="$out.tmp"
# Replace only when the content changed, so make rebuilds what depends on it only then.
if cmp -s "$out.tmp" "$out"; then rm "$out.tmp"; else mv "$out.tmp" "$out"; echo "bundle: $out ($(stat -c %s "$out") bytes)"; fi
