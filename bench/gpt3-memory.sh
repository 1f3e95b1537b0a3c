#!/usr/bin/env bash
# GPT-3-175B (96 layers, d_model 12288, 96 heads, sequence 2048, batch 8,
# vocabulary 50257) on 80 GiB devices (docs/Planner.md, "GPT-3-175B on
# 80 GiB devices"): for each worker count K, the fullest worker's predicted
# peak (the largest of peak_bytes_per_worker) and comm_bytes of six plans:
#   fp32 SGD             tofu-plan's plan of the fp32 SGD step;
#   fp32 SGD recompute   the same with --peak-memory BUDGET;
#   bf16 Adam            tofu-plan's plan of the bf16 (autocast) Adam step;
#   bf16 Adam recompute  the same with --peak-memory BUDGET;
#   fsdp fp32 SGD, fsdp bf16 Adam
#                        --baseline=fsdp of each step (no recomputation:
#                        tofu-plan takes no --peak-memory with a baseline);
# a --peak-memory run that finds no plan prints the least peak it reached
# and what the fullest worker then holds (tofu-plan's error). Each row has
# tofu-plan's CPU time (user + sys, GNU time). Then, per plan, the fewest
# K listed whose peak is at most BUDGET.
# Not a CI test: K = 8 ... 128 take a few minutes of CPU, most of it the
# --peak-memory plans at K = 64 and 128. The graphs
# are exported once into build/bench-models/ (the bf16 one takes a minute).
#
# usage: bench/gpt3-memory.sh [BUILD_DIR [BUDGET [K...]]]
#        (default BUDGET 80G, K 8 16 32 64 128)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-${TOFU_BUILD_DIR:-$root/build}}"
budget="${2:-80G}"
shift 2 || shift $#
workers=("${@:-8 16 32 64 128}")
workers=(${workers[*]})
models="$build/bench-models"
mkdir -p "$models"
model=(gpt:96:12288:96:2048 --batch 8 --vocab 50257)
fp32="$models/gpt3.json"
bf16="$models/gpt3-bf16-adam.json"
[[ -f "$fp32" ]] || "$build/bin/tofu-export" "${model[@]}" -o "$fp32" >&2
[[ -f "$bf16" ]] || "$build/bin/tofu-export" "${model[@]}" --precision bf16 \
  --optimizer adam -o "$bf16" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# plan NAME GRAPH K [FLAGS...]: writes $work/NAME.json, or NAME.err when
# tofu-plan exits 1 (no plan within the budget), and NAME.time (user and
# sys seconds).
plan() {
  local name=$1 graph=$2 k=$3
  shift 3
  local status=0
  /usr/bin/time -f '%U %S' -o "$work/$name.time" "$build/bin/tofu-plan" \
    "$graph" --workers "$k" --quiet "$@" -o "$work/$name.json" \
    2> "$work/$name.err" || status=$?
  if [[ $status -ne 0 && $status -ne 1 ]]; then
    cat "$work/$name.err" >&2
    exit "$status"
  fi
  [[ $status -eq 0 ]] && rm -f "$work/$name.err"
  # GNU time writes "Command exited with non-zero status 1" first.
  tail -1 "$work/$name.time" > "$work/$name.t"
  mv "$work/$name.t" "$work/$name.time"
}

for k in "${workers[@]}"; do
  plan "fp32.$k" "$fp32" "$k"
  plan "fp32-recompute.$k" "$fp32" "$k" --peak-memory "$budget"
  plan "bf16.$k" "$bf16" "$k"
  plan "bf16-recompute.$k" "$bf16" "$k" --peak-memory "$budget"
  plan "fsdp-fp32.$k" "$fp32" "$k" --baseline=fsdp
  plan "fsdp-bf16.$k" "$bf16" "$k" --baseline=fsdp
  for f in "$work"/*."$k".json; do # keep the numbers, not the plans
    python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
json.dump({"peak": max(p["peak_bytes_per_worker"]), "comm": p["comm_bytes"],
           "recomputed": len(p.get("recompute", []))}, open(sys.argv[1], "w"))' "$f"
  done
done

python3 - "$work" "$budget" "${workers[@]}" <<'PY'
import json, os, re, sys
work, budget, workers = sys.argv[1], sys.argv[2], sys.argv[3:]
scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(budget[-1].upper(), 1)
budget_bytes = int(budget.rstrip("KMGkmg")) * scale
GiB = float(1 << 30)
plans = [("fp32", "fp32 SGD"), ("fp32-recompute", "fp32 SGD recompute"),
         ("bf16", "bf16 Adam"), ("bf16-recompute", "bf16 Adam recompute"),
         ("fsdp-fp32", "fsdp fp32 SGD"), ("fsdp-bf16", "fsdp bf16 Adam")]
print("--peak-memory %s; peaks in GiB (2^30 bytes)" % budget)
print("%5s %-20s %9s %16s %10s %7s" % ("K", "plan", "peak/wkr", "comm_bytes",
                                       "recomputed", "cpu_s"))
fewest = {}
for k in workers:
    for name, title in plans:
        path = os.path.join(work, "%s.%s" % (name, k))
        user, system = open(path + ".time").read().split()
        cpu = float(user) + float(system)
        if os.path.exists(path + ".err"):
            err = open(path + ".err").read().strip().splitlines()[-1]
            why = re.search(r"at least ([0-9.]+ \w+).*holding (.*)", err)
            text = ("no plan: least %s, holding %s" % why.groups() if why
                    else err)
            print("%5s %-20s %s (%.1f s)" % (k, title, text, cpu))
            continue
        p = json.load(open(path + ".json"))
        print("%5s %-20s %9.2f %16d %10s %7.1f" % (
            k, title, p["peak"] / GiB, p["comm"],
            p["recomputed"] if "recompute" in name else "-", cpu))
        if p["peak"] <= budget_bytes and name not in fewest:
            fewest[name] = (k, p)
print()
for name, title in plans:
    if name in fewest:
        k, p = fewest[name]
        print("%-20s fits %s from K = %s: peak %.2f GiB, comm_bytes %d" %
              (title, budget, k, p["peak"] / GiB, p["comm"]))
    else:
        print("%-20s fits %s at none of K = %s" % (title, budget,
                                                  " ".join(workers)))
PY
