#!/usr/bin/env bash
# Builds bronzectl for operators' machines: the esbuild bundle of the whole CLI (runs on any
# Node >= 20) and the single executable (the pinned Node runtime from npm, made by sea.sh as the
# node's binary is). In the single executable the main script is the front
# (src/bronzectl/front.ts: the command tree alone, which answers help, usage errors,
# `version --client` and `completion` by itself) and the whole CLI travels as the SEA asset
# bronzectl.cjs with its V8 code cache, loaded only for the other commands. (The koffi asset
# sea.sh adds is unused by bronzectl and harmless.)
# usage: image-builder/bronzectl.sh <out-dir> [<arch>]   → <out-dir>/bronzectl.cjs and
#        <out-dir>/bronzectl (a single executable for linux/<arch>: amd64, the default, or arm64)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: image-builder/bronzectl.sh <out-dir> [<arch>]}; arch=${2:-amd64}
mkdir -p "$out"
"$ROOT/image-builder/bundle.sh" "$ROOT/src/bronzectl/main.ts" "$out/bronzectl.cjs"
# sea.sh takes a directory: main.cjs (the main script) and every other *.cjs as a cached asset.
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$ROOT/image-builder/bundle.sh" "$ROOT/src/bronzectl/front.ts" "$work/main.cjs" >/dev/null
# Its #! line made a comment: the asset is compiled as a function body (src/lib/role-source.ts).
sed '1s|^#!|//|' "$out/bronzectl.cjs" > "$work/bronzectl.cjs"
"$ROOT/image-builder/sea.sh" "$arch" "$work" "$out/bronzectl"
