#!/usr/bin/env bash
# The plan against the baselines users run at scale (docs/Planner.md, "The
# baselines users run at scale"): for each graph and worker count, the
# comm_bytes and the fullest worker's resident and peak bytes of the plan,
# fsdp (ZeRO-3) and megatron-dp (Megatron tensor parallelism within groups
# of 8, data parallelism across), as tofu-plan's summary lists them, with
# tofu-plan's wall time and peak memory (GNU time).
# Graphs are exported once into build/bench-models/. GPT-3-175B at K = 1024
# takes minutes and several GiB; pass the runs to make, e.g.
#   bench/baselines-scale.sh build "wrn152-10 8" "wrn152-10 64"
#
# usage: bench/baselines-scale.sh [BUILD_DIR [ "GRAPH K" ...]]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-${TOFU_BUILD_DIR:-$root/build}}"
shift || true
models="$build/bench-models"
mkdir -p "$models"
runs=("$@")
[[ ${#runs[@]} -gt 0 ]] || runs=("wrn152-10 8" "wrn152-10 64" "gpt3 1024")

export_model() { # NAME
  [[ -f "$models/$1.json" ]] && return
  case $1 in
  wrn152-10) "$build/bin/tofu-export" wresnet:152:10 --batch 8 -o "$models/$1.json" >&2 ;;
  gpt3) "$build/bin/tofu-export" gpt:96:12288:96:2048 --batch 8 --vocab 50257 \
    -o "$models/$1.json" >&2 ;;
  *) echo "unknown graph '$1' (wrn152-10, gpt3)" >&2; exit 2 ;;
  esac
}

printf '%-10s %5s %-12s %20s %14s %14s %8s %8s\n' graph K baseline comm_bytes \
  resident/wkr peak/wkr wall_s rss_MiB
for run in "${runs[@]}"; do
  set -- $run
  export_model "$1"
  out=$(mktemp)
  /usr/bin/time -f '%e %M' -o "$out.time" \
    "$build/bin/tofu-plan" "$models/$1.json" --workers "$2" --emit=summary \
    --quiet -o "$out"
  read -r wall rss < "$out.time"
  # Rows of the summary's baseline table: name, bytes, ratio, resident, peak.
  awk -v g="$1" -v k="$2" -v wall="$wall" -v rss=$((rss / 1024)) '
    /^baselines/ { on = 1; next }
    on && /^$/ { on = 0 }
    on && ($1 == "this" || $1 == "fsdp" || $1 == "megatron-dp") {
      name = $1 == "this" ? "plan" : $1; off = $1 == "this" ? 1 : 0
      printf "%-10s %5s %-12s %20s %14s %14s %8s %8s\n", g, k, name,
        $(2 + off), $(4 + off) " " $(5 + off), $(6 + off) " " $(7 + off), wall, rss
    }' "$out"
  rm -f "$out" "$out.time"
done
