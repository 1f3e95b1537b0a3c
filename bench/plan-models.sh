#!/usr/bin/env bash
# The planner on the paper's models and a large GPT (docs/Planner.md,
# "Performance"): for each graph and worker count, tofu-plan's wall time
# and peak memory (GNU time), its own search time, and the plan's
# comm_bytes against the data-parallel baseline and its fullest worker
# against an even share of the graph, both measured in the same run; and
# what refinement buys: the recursion alone's search time and comm_bytes
# (--refine=false) against the default's.
# Graphs are exported once into build/bench-models/.
#
# usage: bench/plan-models.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-${TOFU_BUILD_DIR:-$root/build}}"
models="$build/bench-models"
mkdir -p "$models"

export_once() { # NAME ARGS...
  local name=$1
  shift
  [[ -f "$models/$name.json" ]] ||
    "$build/bin/tofu-export" "$@" -o "$models/$name.json" >&2
}

export_once wrn152-10 wresnet:152:10 --batch 8
export_once rnn10-8k rnn:10:8192 --batch 128
export_once gpt48 gpt:48:2048:16:1024 --batch 8 --vocab 50257 --optimizer adam

printf '%-10s %3s %8s %8s %9s %12s %14s %16s %18s\n' graph K wall_s rss_MiB \
  search_s 'dp/plan' 'fullest/share' 'unrefined/plan' 'unrefined_search_s'
for run in "wrn152-10 8" "rnn10-8k 8" "gpt48 64"; do
  set -- $run
  out=$(mktemp)
  /usr/bin/time -f '%e %M' -o "$out.time" \
    "$build/bin/tofu-plan" "$models/$1.json" --workers "$2" --emit=summary \
    --quiet -o "$out"
  read -r wall rss < "$out.time"
  search=$(sed -n 's/^search: *\([0-9.]*\) s.*/\1/p' "$out")
  dp=$(sed -n 's/^ *data-parallel *[0-9]* *\([0-9.]*\)x.*/\1/p' "$out")
  share=$(sed -n 's/.*worker, \([0-9.]*\)x of an even share.*/\1/p' "$out")
  bytes=$(sed -n 's/^comm_bytes: *\([0-9]*\).*/\1/p' "$out")
  "$build/bin/tofu-plan" "$models/$1.json" --workers "$2" --emit=summary \
    --quiet --refine=false -o "$out"
  search0=$(sed -n 's/^search: *\([0-9.]*\) s.*/\1/p' "$out")
  bytes0=$(sed -n 's/^comm_bytes: *\([0-9]*\).*/\1/p' "$out")
  gain=$(awk -v a="$bytes0" -v b="$bytes" 'BEGIN { printf "%.3f", a / b }')
  printf '%-10s %3s %8s %8d %9s %12s %14s %16s %18s\n' "$1" "$2" "$wall" \
    $((rss / 1024)) "$search" "${dp}x" "${share}x" "${gain}x" "$search0"
  rm -f "$out" "$out.time"
done
