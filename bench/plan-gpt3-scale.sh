#!/usr/bin/env bash
# GPT-3-175B (96 layers, d_model 12288, 96 heads, sequence 2048, batch 8,
# vocabulary 50257: 14,537 ops) planned for large worker counts
# (docs/Planner.md, "Performance"): for each K, tofu-plan's wall time and
# peak memory (GNU time), the plan file's size (compact layouts above 64
# workers, docs/PlanFormat.md), and --verify's wall time and peak memory
# on that file. Not a CI test: at K = 16384 a run takes a minute and GBs.
# Both runs predict every worker's peak (docs/CostModel.md, "resident and
# peak bytes"): each op class's regions and messages once (GPT-3 has about
# 120 op classes), then every worker's replay of every op (time K x ops),
# the part that grows fastest with K.
# Run it on an otherwise idle machine: the wall times are what it reports;
# on a loaded one read the CPU columns (user + sys), which issue 22's
# targets (< 60 s, < 8 GiB) are checked against here. Each run is stopped
# after PLAN_TIMEOUT seconds of wall time (default 1800; its row then says
# "timeout"), so K = 4096 and 16384 can be asked for without running for
# hours, and each run's virtual memory is capped at PLAN_VMEM_KB (default
# 12 GiB, `ulimit -v`), so a K whose planner outgrows the machine fails
# alone (its row then says "failed": out of memory, or another error on
# stderr) instead of pushing other work out. The last two columns are the
# plan's balance (bench/plan-balance.py):
# fullest worker's peak / mean peak, fullest resident / an even share.
# The graph is exported once into build/bench-models/; GPT3_BATCH (default
# 8) sets its batch, e.g. GPT3_BATCH=1536, the batch users train with.
#
# usage: bench/plan-gpt3-scale.sh [BUILD_DIR] [K...]   (default K: 1024)
#        e.g. bench/plan-gpt3-scale.sh build 1024 4096 16384
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-${TOFU_BUILD_DIR:-$root/build}}"
shift || true
workers=("${@:-1024}")
limit="${PLAN_TIMEOUT:-1800}"
vmem="${PLAN_VMEM_KB:-12582912}"
models="$build/bench-models"
mkdir -p "$models"
batch="${GPT3_BATCH:-8}"
graph="$models/gpt3-175b$([[ $batch == 8 ]] || echo "-b$batch").json"
[[ -f "$graph" ]] ||
  "$build/bin/tofu-export" gpt:96:12288:96:2048 --batch "$batch" --vocab 50257 \
    -o "$graph" >&2

printf '%6s %8s %8s %9s %9s %8s %8s %10s %12s %6s %6s\n' K plan_s plan_cpu \
  plan_MiB file_MiB verify_s ver_cpu verify_MiB comm_bytes peak_x resid_x
for k in "${workers[@]}"; do
  out=$(mktemp)
  status=0
  (ulimit -v "$vmem"; /usr/bin/time -f '%e %U %S %M' -o "$out.time" \
    timeout "$limit" "$build/bin/tofu-plan" "$graph" --workers "$k" --quiet \
    -o "$out") || status=$?
  if [[ $status != 0 ]]; then
    if [[ $status == 124 ]]; then
      printf '%6s %8s (tofu-plan ran past %s s)\n' "$k" timeout "$limit"
    else
      printf '%6s %8s (tofu-plan exited with %s: out of memory under %s KB, or see stderr)\n' \
        "$k" failed "$status" "$vmem"
    fi
    rm -f "$out" "$out.time"
    continue
  fi
  read -r wall user sys rss < "$out.time"
  size=$(stat -c %s "$out")
  balance=$(python3 "$root/bench/plan-balance.py" "$out" "$graph")
  # A --verify that ran past the limit or out of memory: "failed".
  vwall=failed vcpu=- vrss=0 comm=-
  if (ulimit -v "$vmem"; /usr/bin/time -f '%e %U %S %M' -o "$out.vtime" \
      timeout "$limit" "$build/bin/tofu-plan" --verify "$out" "$graph" \
      > "$out.verify"); then
    read -r vwall vuser vsys vrss < "$out.vtime"
    vcpu=$(echo "$vuser + $vsys" | bc)
    comm=$(sed -n 's/.*comm_bytes \([0-9]*\) recomputed/\1/p' "$out.verify")
  fi
  printf '%6s %8s %8s %9d %9.1f %8s %8s %10d %12s %6s %6s\n' "$k" "$wall" \
    "$(echo "$user + $sys" | bc)" $((rss / 1024)) \
    "$(echo "$size / 1048576" | bc -l)" "$vwall" "$vcpu" $((vrss / 1024)) \
    "$comm" $balance
  rm -f "$out" "$out.time" "$out.vtime" "$out.verify"
done
