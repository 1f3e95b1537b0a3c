#!/usr/bin/env bash
# README command 1: install what is missing, build, and run the main job on
# the bundled default. Until the planner lands (then: plan a bundled real
# model for 8 workers), the main job takes the bundled ResNet-50 training
# step (models/resnet50.json) through what exists: every op instantiated
# against the standard operator library (specs/), the graph validated, and
# its summary printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${TOFU_BUILD_DIR:-$root/build}"
model="$root/models/resnet50.json"

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

shopt -s nullglob
specs=("$root"/specs/*.tdl)
if [[ ${#specs[@]} -eq 0 ]]; then
  echo "demo: no specs in $root/specs" >&2
  exit 1
fi
echo "== tdlc: the standard library (${#specs[@]} files) against $(basename "$model")"
"$build/bin/tdlc" "${specs[@]}" --coverage "$model" | tail -n 1
echo "== tofu-graph: validating $(basename "$model")"
"$build/bin/tofu-graph" "$model"
