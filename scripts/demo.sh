#!/usr/bin/env bash
# README command 1: install what is missing, build, and run the main job on
# the bundled default: plan the bundled ResNet-50 training step
# (models/resnet50.json) for 8 workers and print the plan's summary
# (bytes moved against data parallelism, memory per worker, the search,
# per-layer steps, top communication sites), after checking the plan with
# the independent verifier.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${TOFU_BUILD_DIR:-$root/build}"
model="$root/models/resnet50.json"

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

workers=8
plan="$build/demo/resnet50-$workers.plan.json"
mkdir -p "$build/demo"
echo "== tofu-plan: $(basename "$model") for $workers workers"
"$build/bin/tofu-plan" "$model" --workers "$workers" -o "$plan"
"$build/bin/tofu-plan" --verify "$plan" "$model"
"$build/bin/tofu-plan" "$model" --workers "$workers" --emit=summary --quiet
