# Shared build identity: sourced by the image-builder scripts. Everything derives from the
# source tree (version in package.json, the commit) so that two builds of one commit match.
ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BRONZE_VERSION=${BRONZE_VERSION:-v$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$ROOT/package.json" | head -1)}
BRONZE_SHA=${BRONZE_SHA:-$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0)}
BRONZE_BUILT=${BRONZE_BUILT:-$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)}
export BRONZE_VERSION BRONZE_SHA BRONZE_BUILT
