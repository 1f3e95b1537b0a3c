#!/usr/bin/env bash
# Configures (once) and builds Tofu into build/. Extra arguments go to
# ninja, e.g. `scripts/build.sh tdlc`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${TOFU_BUILD_DIR:-$root/build}"

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
ninja -C "$build" "$@"
