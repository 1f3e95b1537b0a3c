#!/bin/sh
# The charlm example's whole contract (docs/Linking.md, "The charlm
# example"; ../shared/spec/interfaces.md, "Training programs"), 40 steps:
#   - threads K = 1 and 4, MPI K = 2 and 4 agree with K = 1 within
#     1e-4 x (1 + |loss|), and K = 1 with reference.py (PyTorch eager, the
#     same initial weights and batches) within 1e-3 x (1 + |loss|);
#   - the loss falls;
#   - a checkpoint after 20 steps with 4 ranks resumes to step 40 bit for
#     bit with 4 ranks and within 1e-4 with 2;
#   - kill -9 of one of 4 ranks ends the job, non-zero, within 30 s.
# The lit tests (test/Examples/charlm*.test) check the same with 10 steps.
#
#   examples/charlm/check.sh [BUILD_DIR [OUT_DIR]]   (default build, a temp dir)
#
# Needs mpirun for the MPI parts (as root: OMPI_ALLOW_RUN_AS_ROOT=1
# OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1). Prints one line per check and exits 1
# if one fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
out=${2:-$(mktemp -d /tmp/charlm-check.XXXXXX)}
mkdir -p "$out"
train=$build/bin/charlm-train
compare="/usr/bin/python3 $root/test/Examples/Inputs/compare-losses.py"
mpirun="mpirun --oversubscribe"
steps=40
status=0
check() { # NAME COMMAND...: runs COMMAND, prints NAME and its verdict line
  name=$1; shift
  if line=$("$@" 2>&1); then echo "ok   $name: $line"
  else echo "FAIL $name: $line"; status=1; fi
}
timed() { # LOG COMMAND...: runs COMMAND with its output in LOG, prints the time
  log=$1; shift
  start=$(date +%s%N)
  "$@" > "$log" 2>&1 || { echo "FAIL: $* (see $log)"; status=1; }
  end=$(date +%s%N)
  echo "     $(basename "$log" .out): $(( (end - start) / 1000000 )) ms wall"
}
echo "charlm check, $steps steps, in $out"
timed "$out/torch.out" /usr/bin/python3 "$here/reference.py" --steps $steps \
  --save-init "$out/init.npz" --losses "$out/torch.txt"
timed "$out/k1.out" "$train" --steps $steps --init "$out/init.npz" \
  --losses "$out/k1.txt"
timed "$out/k4.out" "$train" --steps $steps --init "$out/init.npz" \
  --workers 4 --losses "$out/k4.txt"
timed "$out/mpi2.out" $mpirun -np 2 "$train" --transport mpi --steps $steps \
  --init "$out/init.npz" --losses "$out/mpi2.txt"
timed "$out/mpi4.out" $mpirun -np 4 "$train" --transport mpi --steps $steps \
  --init "$out/init.npz" --losses "$out/mpi4.txt" --save "$out/ckpt" \
  --save-every 20
timed "$out/resume4.out" $mpirun -np 4 "$train" --transport mpi \
  --steps $steps --resume "$out/ckpt/step-00000020" --losses "$out/resume4.txt"
timed "$out/resume2.out" $mpirun -np 2 "$train" --transport mpi \
  --steps $steps --resume "$out/ckpt/step-00000020" --losses "$out/resume2.txt"
for run in k1 k4 mpi2 mpi4; do
  echo "     $run: $(grep -h "steps in" "$out/$run.out" | sed 's/charlm-train: //')"
done

check "K=1 vs PyTorch" $compare "$out/k1.txt" "$out/torch.txt" --tolerance 1e-3
check "threads K=4 vs K=1" $compare "$out/k4.txt" "$out/k1.txt"
check "MPI K=2 vs K=1" $compare "$out/mpi2.txt" "$out/k1.txt"
check "MPI K=4 vs K=1" $compare "$out/mpi4.txt" "$out/k1.txt"
check "K=1 loss falls" $compare "$out/k1.txt" --falls
check "resume 4 -> 4" $compare "$out/resume4.txt" "$out/mpi4.txt" --from 21 \
  --exact
check "resume 4 -> 2" $compare "$out/resume2.txt" "$out/mpi4.txt" --from 21
check "kill -9 of rank 2 of 4" sh -c "/usr/bin/python3 \
  $root/test/Examples/Inputs/charlm-kill.py --mpirun '$mpirun' --np 4 \
  --rank 2 --signal KILL --after 5 --limit 30 --dir $out/kill -- $train \
  --transport mpi --steps 100000 | tail -2 | tr '\n' ' '"
echo "     losses: K=1 step 1 $(sed -n 1p "$out/k1.txt" | cut -d' ' -f2)," \
  "step $steps $(sed -n ${steps}p "$out/k1.txt" | cut -d' ' -f2);" \
  "PyTorch step 1 $(sed -n 1p "$out/torch.txt" | cut -d' ' -f2)," \
  "step $steps $(sed -n ${steps}p "$out/torch.txt" | cut -d' ' -f2)"
[ $status = 0 ] && echo "all checks passed" || echo "a check failed"
exit $status
