#!/usr/bin/env bash
# Golden check for refactors that must not change a byte: runs every shipped scenario (and a
# few sweeps and variants) with a given fabricsim binary, sequentially and on 2 MPI ranks, and
# prints one line per output file: `NAME FILE SHA256`. Record the lines at a known-good commit,
# then compare after the change:
#
#   scripts/golden.sh build/fabricsim > /tmp/golden.before      # at the starting commit
#   scripts/golden.sh build/fabricsim > /tmp/golden.after       # after the change
#   diff /tmp/golden.before /tmp/golden.after && echo identical
#
# Hashed: results.json, ports.csv, queues.csv, flows.csv, trace.json (perf.json holds wall
# times), the exit code, and stdout without its wall-time lines. GOLDEN_FAST=1 leaves out the
# 512-GPU sweep scenario (about 100 s) and the MPI runs. Run from the source tree.
set -u
bin=$(realpath "${1:?usage: scripts/golden.sh PATH/TO/fabricsim}")
fast=${GOLDEN_FAST:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpi=$(command -v mpirun || true)

# stdout minus the lines that hold wall-clock times, machine speed or the output folder.
stable_stdout() { grep -v -E '^# (time|wrote) |wall|events/s' "$1" | sed "s|$tmp|OUT|g"; }

# one NAME CMD...: runs fabricsim CMD with --out into a fresh folder and hashes what it wrote.
one() {
  local name=$1
  shift
  local out=$tmp/$name
  "$@" --out "$out" >"$out.stdout" 2>"$out.stderr"
  echo "$name exit $?"
  echo "$name stdout $(stable_stdout "$out.stdout" | sha256sum | cut -c1-16)"
  local f
  for f in $(cd "$out" 2>/dev/null && find . -type f ! -name perf.json ! -name 'sweep_perf.csv' \
    ! -name '*.svg' ! -name 'report.html' | sort); do
    echo "$name ${f#./} $(sha256sum <"$out/$f" | cut -c1-16)"
  done
}

for s in scenarios/*.yaml; do
  n=$(basename "$s" .yaml)
  [ "$fast" = 1 ] && [ "$n" = architect_512_h100 ] && continue
  one "$n" "$bin" run "$s"
  if [ "$fast" != 1 ] && [ -n "$mpi" ] && [ "$n" != architect_512_h100 ]; then
    one "$n.mpi2" "$mpi" --oversubscribe --allow-run-as-root -np 2 "$bin" run "$s"
  fi
done
# Variants that reach the flow mode, the watchdog, go-back-N and a sweep with its report.
one quickstart.flow "$bin" run scenarios/quickstart.yaml --mode flow
one fat_tree_k8.flow "$bin" run scenarios/fat_tree_k8.yaml --mode flow
one clos-bounce.watchdog "$bin" run scenarios/pfc-deadlock-clos-bounce.yaml \
  --set pfc.watchdog=true
one victim.ber "$bin" run scenarios/pfc-victim-flow.yaml --set link.bit_error_rate=1e-6
one ecn.sweep "$bin" sweep scenarios/ecn-threshold-sweep.yaml \
  --vary ecn.kmin=5KB,100KB --jobs 1 --report
# calibrate writes FILE.yaml and FILE.report.json; hashed as files of a folder.
calibrate_one() {
  local out=$tmp/calibrate
  mkdir -p "$out"
  "$bin" calibrate --perftest tests/data/perftest/$(ls tests/data/perftest | head -1) \
    --nccl-tests tests/data/nccl/nccl-allgather-h200-2x1-gcp-a3ultra-roce-gib-01.txt \
    --scenario scenarios/roce_h200_a3ultra.yaml --out "$out/fit.yaml" >"$out.stdout" 2>&1
  echo "calibrate exit $?"
  echo "calibrate stdout $(stable_stdout "$out.stdout" | sha256sum | cut -c1-16)"
  for f in fit.yaml fit.report.json; do
    echo "calibrate $f $(sed "s|$tmp|OUT|g" "$out/$f" | sha256sum | cut -c1-16)"
  done
}
calibrate_one
