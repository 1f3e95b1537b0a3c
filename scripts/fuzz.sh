#!/usr/bin/env bash
# Fuzzes every reader under ASan and UBSan for a fixed time each
# (DEVELOPERS.md, "Fuzzing"): builds the tools and the graph fuzzer into a
# sanitizer build (-DTOFU_BUILD_FUZZERS=ON turns the sanitizers on), then
# runs, each for SECONDS:
#   tdl    utils/fuzz-tdlc.py   mutated specs/*.tdl through tdlc
#   graph  tofu-graph-fuzzer    mutated graph JSON through the reader,
#                               writer and both verifier passes
#   onnx   utils/fuzz-graph/mutate-onnx.py  byte edits of ONNX models
#   plan   utils/fuzz-plan.py   plan JSON, graphs, .npy inputs, flags and
#                               references through tofu-plan --verify and
#                               tofu-run, repaired plans with --check
#   machine utils/fuzz-json.py  mutated machine files through tofu-plan
#                               --machine
# Prints one line per reader and exits 1 if any found a crash, a sanitizer
# report or a hang (the failing input is kept under OUT).
#
#   scripts/fuzz.sh [--seconds N] [--readers tdl,graph,onnx,plan,machine]
#                   [--build-dir DIR] [--no-build] [--seed S] [--out DIR]
#
# --no-build runs the tools already in DIR/bin (a sanitizer build, or for a
# quick look the Release build/, without the sanitizers' checks).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=60
readers=tdl,graph,onnx,plan,machine
build="$root/build-fuzz"
do_build=1
seed=1
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --readers) readers=$2; shift 2 ;;
    --build-dir) build=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift 2 ;;
    --no-build) do_build=0; shift ;;
    --seed) seed=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "fuzz.sh: unknown argument '$1' (see the comment at the top)" >&2
       exit 2 ;;
  esac
done
case "$seconds" in
  ''|*[!0-9]*) echo "fuzz.sh: --seconds takes a whole number" >&2; exit 2 ;;
esac
for reader in ${readers//,/ }; do
  case "$reader" in
    tdl|graph|onnx|plan|machine) ;;
    *) echo "fuzz.sh: unknown reader '$reader' (tdl, graph, onnx, plan, machine)" >&2
       exit 2 ;;
  esac
done
out=${out:-$(mktemp -d /tmp/tofu-fuzz.XXXXXX)}
mkdir -p "$out"
python=/usr/bin/python3
bin="$build/bin"

if [ "$do_build" = 1 ]; then
  if [ ! -f "$build/build.ninja" ]; then
    cmake -G Ninja -S "$root" -B "$build" -DTOFU_BUILD_FUZZERS=ON \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" > "$out/configure.log" 2>&1 ||
      { echo "fuzz.sh: configuring $build failed ($out/configure.log)" >&2
        exit 1; }
  fi
  ninja -C "$build" tdlc tofu-graph tofu-plan tofu-run tofu-graph-fuzzer \
    > "$out/build.log" 2>&1 ||
    { echo "fuzz.sh: building failed ($out/build.log)" >&2; exit 1; }
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TOFU_KERNEL_CACHE=${TOFU_KERNEL_CACHE:-$out/kernel-cache}
failed=0

# Runs reader $1's command (the rest) in its own folder under $out and
# prints its summary line.
report() {
  local name=$1 status
  shift
  mkdir -p "$out/$name"
  (cd "$out/$name" && "$@") > "$out/$name/log" 2>&1
  status=$?
  if [ "$status" = 0 ]; then
    echo "fuzz.sh: $name: $(tail -n 1 "$out/$name/log")"
  else
    echo "fuzz.sh: $name: FAILED (exit $status): $out/$name/log"
    tail -n 15 "$out/$name/log" | sed 's/^/  | /'
    failed=1
  fi
}

# fuzz-tdlc.py takes a count, not a time: batches of 100 mutants, a new
# seed each, until the time is up.
fuzz_tdl() {
  local end=$((SECONDS + seconds)) batch=0
  while [ $SECONDS -lt $end ]; do
    "$python" "$root/utils/fuzz-tdlc.py" "$bin/tdlc" "$root"/specs/*.tdl \
      --count 100 --seed $((seed * 1000 + batch)) --save "$out/tdl/failure" ||
      return 1
    batch=$((batch + 1))
  done
  echo "$((batch * 100)) mutants in $batch batches, no failure"
}

fuzz_onnx() {
  "$python" "$root/test/Graph/Inputs/make_onnx.py" "$out/onnx/seeds" > /dev/null &&
    "$python" "$root/utils/fuzz-graph/mutate-onnx.py" "$out/onnx/seeds" \
      "$bin/tofu-graph" "$seconds" "$seed"
}

for reader in ${readers//,/ }; do
  case "$reader" in
    tdl) report tdl fuzz_tdl ;;
    graph)
      report graph "$bin/tofu-graph-fuzzer" "$seconds" "$seed" \
        "$root/models/mlp.json" "$root"/test/Graph/Inputs/*.json ;;
    onnx) report onnx fuzz_onnx ;;
    plan)
      report plan "$python" "$root/utils/fuzz-plan.py" \
        --tofu-plan "$bin/tofu-plan" --tofu-run "$bin/tofu-run" \
        "$root/test/Runtime/Inputs/conv-tiny.json" \
        "$root/test/Runtime/Inputs/mlp-b8.json" --workers 1,2,4 \
        --minutes "$("$python" -c "print($seconds / 60)")" --seed "$seed" \
        --check-repaired --save "$out/plan/failure" ;;
    machine)
      report machine "$python" "$root/utils/fuzz-json.py" \
        "$root/test/Plan/Inputs/machine-2.json" "$root"/machines/*.json \
        --seconds "$seconds" --seed "$seed" --save "$out/machine/failure" \
        -- "$bin/tofu-plan" "$root/test/Plan/Inputs/fc.json" --workers 2 \
        --quiet --machine {} -o /dev/null ;;
  esac
done
echo "fuzz.sh: logs in $out"
exit $failed
