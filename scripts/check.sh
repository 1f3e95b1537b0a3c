#!/usr/bin/env bash
# README command 2 (and what .ci/run calls): install what is missing, build
# everything, and run every test: the lit suites and the unit tests, through
# ctest. Exits non-zero if anything fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${TOFU_BUILD_DIR:-$root/build}"

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc)"
