#!/usr/bin/env bash
# README command 1: install what is missing, build, and run the main job on
# the bundled default: check the standard operator library with tdlc and
# print its summary (until the planner lands; then: plan a bundled real
# model for 8 workers).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${TOFU_BUILD_DIR:-$root/build}"

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

shopt -s nullglob
specs=("$root"/specs/*.tdl)
if [[ ${#specs[@]} -eq 0 ]]; then
  echo "demo: no specs in $root/specs" >&2
  exit 1
fi
echo "== tdlc: checking ${#specs[@]} spec files of the standard library"
"$build/bin/tdlc" "${specs[@]}" --emit=summary
