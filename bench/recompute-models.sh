#!/usr/bin/env bash
# Recomputation on the large graphs (docs/Runtime.md, "Recomputation"):
# for each graph, K and --peak-memory budget, tofu-plan's plan recomputing
# nothing and the plan under the budget, then tofu-run --check --report of
# the latter (threads); one row per run: the live-bytes bound (no plan
# recomputing nothing peaks below it), the peaks without and with
# recomputation, how many tensors are recomputed, the measured peak per
# worker, moved and comm_bytes, the check's max relative error, wall time.
# ResNet-50 at K = 2 takes about 7 minutes on 2 loaded cores and 6 GB.
#   bench/recompute-models.sh build "gpt-2l-b32 2 460M" "resnet50 4 500M"
#
# usage: bench/recompute-models.sh [BUILD_DIR [ "GRAPH K BUDGET" ...]]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-${TOFU_BUILD_DIR:-$root/build}}"
shift || true
out="$build/bench-recompute"
mkdir -p "$out"
runs=("$@")
[[ ${#runs[@]} -gt 0 ]] || runs=("gpt-2l-b32 2 460M" "gpt-2l-b32 4 230M"
  "resnet50 2 1G" "resnet50 4 500M")

graph_of() { # NAME -> path
  case $1 in
  gpt-2l-b32)
    [[ -f "$out/$1.json" ]] || "$build/bin/tofu-export" gpt:2:512:8:128 \
      --batch 32 --vocab 8192 --optimizer adam -o "$out/$1.json" >&2
    echo "$out/$1.json" ;;
  resnet50) echo "$root/models/resnet50.json" ;;
  *) echo "unknown graph '$1' (gpt-2l-b32, resnet50)" >&2; exit 2 ;;
  esac
}

for run in "${runs[@]}"; do
  read -r name k budget <<<"$run"
  graph=$(graph_of "$name")
  base="$out/$name.k$k.$budget"
  "$build/bin/tofu-plan" "$graph" --workers "$k" --quiet -o "$base.plain.json"
  "$build/bin/tofu-plan" "$graph" --workers "$k" --quiet --peak-memory "$budget" \
    --emit=summary -o "$base.summary.txt"
  "$build/bin/tofu-plan" "$graph" --workers "$k" --quiet --peak-memory "$budget" \
    -o "$base.plan.json"
  start=$(date +%s)
  status=0
  "$build/bin/tofu-run" "$base.plan.json" --check --report "$base.report.json" \
    > "$base.run.txt" 2>&1 || status=$?
  seconds=$(( $(date +%s) - start ))
  python3 - "$base" "$name" "$k" "$budget" "$status" "$seconds" <<'PY'
import json, re, sys
base, name, k, budget, status, seconds = sys.argv[1:]
plain = json.load(open(base + ".plain.json"))
plan = json.load(open(base + ".plan.json"))
report = json.load(open(base + ".report.json"))
bound = re.search(r"peaks below ([0-9.]+ \w+)", open(base + ".summary.txt").read())
print(f"{name} K={k} --peak-memory {budget}: bound {bound.group(1) if bound else '-'}, "
      f"peak {max(plain['peak_bytes_per_worker'])} -> {max(plan['peak_bytes_per_worker'])}, "
      f"{len(plan.get('recompute', []))} recomputed, measured {report['peak_bytes_per_worker']}, "
      f"moved {report['moved_bytes']} comm {report['comm_bytes']} (plain {plain['comm_bytes']}), "
      f"max rel error {report['max_rel_error']:.2g}, tofu-run exit {status}, {seconds} s")
PY
done
