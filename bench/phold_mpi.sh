#!/usr/bin/env bash
# The engine's parallel speedup (issue 10): PHOLD (sim/parallel/phold_main.cpp) on 1 rank (the
# plain sequential Simulator) and on 2 MPI ranks (WindowSync), RUNS times each, alternating;
# prints every run's line and checks that each 2-rank output is byte-identical to the
# sequential one. Run by hand on an idle machine, from the repository root, after a Release
# build:  bash bench/phold_mpi.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-3}
phold="$build/sim/parallel/fabricsim-phold"
[ -x "$phold" ] || { echo "no $phold: build with MPI (libopenmpi-dev) first" >&2; exit 2; }
args=(--lps 4096 --tokens 8 --end 100us --lookahead 500ns --mean 100ns --seed 1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$phold" "${args[@]}" --out "$tmp/seq.txt" 2>/dev/null
for i in $(seq 1 "$runs"); do
  "$phold" "${args[@]}" --out "$tmp/seq-$i.txt" 2>&1 | grep '^phold: 1 rank'
  mpirun --oversubscribe --allow-run-as-root -np 2 "$phold" "${args[@]}" --out "$tmp/np2-$i.txt" \
    2>&1 | grep '^phold: 2 ranks'
  cmp -s "$tmp/seq.txt" "$tmp/np2-$i.txt" || { echo "run $i: 2 ranks differ from 1" >&2; exit 1; }
done
echo "all 2-rank outputs byte-identical to the sequential run"
