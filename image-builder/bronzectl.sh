#!/usr/bin/env bash
# Builds bronzectl for operators' machines: the esbuild bundle (runs on any Node >= 20) and the
# single executable (the pinned Node runtime from npm with the bundle injected; the koffi asset
# sea.sh adds is unused by bronzectl and harmless).
# usage: image-builder/bronzectl.sh <out-dir>   → <out-dir>/bronzectl.cjs and <out-dir>/bronzectl (linux/amd64)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: image-builder/bronzectl.sh <out-dir>}
mkdir -p "$out"
"$ROOT/image-builder/bundle.sh" "$ROOT/src/bronzectl/main.ts" "$out/bronzectl.cjs"
"$ROOT/image-builder/sea.sh" amd64 "$out/bronzectl.cjs" "$out/bronzectl"
