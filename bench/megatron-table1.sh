#!/usr/bin/env bash
# Megatron-LM's Table 1 (Narayanan et al., SC'21) and ZeRO-3's Figure 10
# points against tofu-plan's simulated steps on machines/dgx-a100-80gb.json
# (docs/Machines.md): for each row, the GPT graph is exported once (meta
# device, into build/bench-models/), planned with --baseline=megatron-3d
# (or --baseline=fsdp for the ZeRO-3 rows), and its TFLOP/s per GPU counted
# by Eq. (3), F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), over the plan's
# estimated_step_seconds.total, beside the published number. Not a CI test:
# the graphs are 3-6 MB each and the fsdp rows plan the 175B graph for 768
# and 1536 workers.
#
# usage: bench/megatron-table1.sh [BUILD_DIR] [ROW...]
#   rows: 1.7b 18.4b 39.1b 145.6b 1t zero3-768 zero3-1536 (default: all)
#   MACHINE=machines/dgx-h100.json to plan on another machine file.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-${TOFU_BUILD_DIR:-$root/build}}"
shift || true
rows=("${@:-1.7b 18.4b 39.1b 145.6b 1t zero3-768 zero3-1536}")
rows=(${rows[*]})
machine="${MACHINE:-$root/machines/dgx-a100-80gb.json}"
models="$build/bench-models"
mkdir -p "$models"
vocab=51200 seq=2048

# name layers hidden heads batch T P GPUs published baseline
declare -A spec=(
  [1.7b]="24 2304 24 512 1 1 32 137 megatron-3d"
  [18.4b]="40 6144 48 1024 8 1 256 135 megatron-3d"
  [39.1b]="48 8192 64 1536 8 2 512 138 megatron-3d"
  [145.6b]="80 12288 96 2304 8 8 1536 148 megatron-3d"
  [1t]="128 25600 160 3072 8 64 3072 163 megatron-3d"
  [zero3-768]="96 12288 96 1536 1 1 768 143 fsdp"
  [zero3-1536]="96 12288 96 1536 1 1 1536 45 fsdp"
)
printf '%-11s %4s %4s %5s %6s %10s %9s %9s %7s %8s\n' row TP PP GPUs batch step_s tflops published error plan_s
for row in "${rows[@]}"; do
  read -r l h a b t p k published kind <<<"${spec[$row]}"
  graph="$models/gpt-$l-$h-$a-$seq-b$b-v$vocab.json"
  [[ -f "$graph" ]] ||
    "$build/bin/tofu-export" "gpt:$l:$h:$a:$seq" --batch "$b" --vocab "$vocab" \
      -o "$graph" >&2
  out=$(mktemp)
  flags=(--baseline="$kind")
  [[ $kind == megatron-3d ]] &&
    flags+=(--tensor-parallel "$t" --pipeline-parallel "$p")
  start=$(date +%s.%N)
  "$build/bin/tofu-plan" "$graph" --workers "$k" --quiet --machine "$machine" \
    "${flags[@]}" -o "$out" 2>"$out.err" || { cat "$out.err" >&2; exit 1; }
  end=$(date +%s.%N)
  /usr/bin/python3 - "$out" "$row" "$t" "$p" "$k" "$b" "$published" \
      "$l" "$h" "$seq" "$vocab" "$start" "$end" <<'PY'
import json, sys
out, row, t, p, k, b, pub, l, h, s, V, start, end = sys.argv[1:]
t, p, k, b, l, h, s, V = map(int, (t, p, k, b, l, h, s, V))
total = json.load(open(out))["estimated_step_seconds"]["total"]
flops = 96 * b * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
tflops = flops / k / total / 1e12
print("%-11s %4d %4d %5d %6d %10.3f %9.1f %9s %+6.1f%% %8.1f" %
      (row, t, p, k, b, total, tflops, pub, (tflops / float(pub) - 1) * 100,
       float(end) - float(start)))
PY
  rm -f "$out" "$out.err"
done
