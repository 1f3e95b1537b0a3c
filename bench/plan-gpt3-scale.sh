#!/usr/bin/env bash
# GPT-3-175B (96 layers, d_model 12288, 96 heads, sequence 2048, batch 8,
# vocabulary 50257: 14,537 ops) planned for large worker counts
# (docs/Planner.md, "Performance"): for each K, tofu-plan's wall time and
# peak memory (GNU time), the plan file's size (compact layouts above 64
# workers, docs/PlanFormat.md), and --verify's wall time and peak memory
# on that file. Not a CI test: at K = 1024 a run takes minutes and GBs.
# Both runs predict every worker's peak (docs/CostModel.md, "resident and
# peak bytes"): memory K x tensors, time with the messages the step sends
# (K^2 for each all-gather op), the part that grows fastest with K.
# Run it on an otherwise idle machine: the wall times are what it reports.
# The graph is exported once into build/bench-models/.
#
# usage: bench/plan-gpt3-scale.sh [BUILD_DIR] [K...]   (default K: 1024)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-${TOFU_BUILD_DIR:-$root/build}}"
shift || true
workers=("${@:-1024}")
models="$build/bench-models"
mkdir -p "$models"
graph="$models/gpt3-175b.json"
[[ -f "$graph" ]] ||
  "$build/bin/tofu-export" gpt:96:12288:96:2048 --batch 8 --vocab 50257 \
    -o "$graph" >&2

printf '%6s %10s %9s %10s %10s %9s %12s\n' K plan_s plan_MiB plan_file_MiB \
  verify_s verify_MiB comm_bytes
for k in "${workers[@]}"; do
  out=$(mktemp)
  /usr/bin/time -f '%e %M' -o "$out.time" \
    "$build/bin/tofu-plan" "$graph" --workers "$k" --quiet -o "$out"
  read -r wall rss < "$out.time"
  size=$(stat -c %s "$out")
  /usr/bin/time -f '%e %M' -o "$out.vtime" \
    "$build/bin/tofu-plan" --verify "$out" "$graph" > "$out.verify"
  read -r vwall vrss < "$out.vtime"
  comm=$(sed -n 's/.*comm_bytes \([0-9]*\) recomputed/\1/p' "$out.verify")
  printf '%6s %10s %9d %10.1f %10s %9d %12s\n' "$k" "$wall" $((rss / 1024)) \
    "$(echo "$size / 1048576" | bc -l)" "$vwall" $((vrss / 1024)) "$comm"
  rm -f "$out" "$out.time" "$out.vtime" "$out.verify"
done
