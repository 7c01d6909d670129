#!/usr/bin/env bash
# The network's parallel speedup (issue 10): `fabricsim run SCENARIO` sequentially and with
# `mpirun -np RANKS`, RUNS times each, alternating. Prints each run's wall time, events/s and
# events/s per rank, the median speedup, and checks that every partitioned run wrote the
# sequential run's results.json, ports.csv, queues.csv and flows.csv byte for byte.
# Run by hand on an idle machine from the repository root, after a Release build:
#   bash bench/mpi_run.sh [BUILD_DIR] [RUNS] [RANKS] [SCENARIO [--set ...]]
# Default: scenarios/fat_tree_k8.yaml (128 GPUs, k=8 fat-tree) up to 16 MiB on 2 ranks.
set -euo pipefail
build=${1:-build}
runs=${2:-3}
ranks=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(scenarios/fat_tree_k8.yaml --set workload.maxbytes=16MiB)
bin="$build/fabricsim"
[ -x "$bin" ] || { echo "no $bin: build first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=(results.json ports.csv queues.csv flows.csv)
# wall_s and events of a run's perf.json / results.json
stats() {
  python3 - "$1" <<'PY'
import json, sys
d = sys.argv[1]
perf = json.load(open(d + "/perf.json"))
res = json.load(open(d + "/results.json"))
print(perf["wall_s"], res["run"]["events"])
PY
}
calc() { python3 -c "print($1)"; }
seq_walls=()
par_walls=()
for i in $(seq 1 "$runs"); do
  "$bin" run "${args[@]}" --out "$tmp/seq-$i" --trace-events 0 >/dev/null
  read -r ws ev < <(stats "$tmp/seq-$i")
  printf 'run %d, 1 rank : %8.3f s wall, %12d events, %6.2f M events/s\n' "$i" "$ws" "$ev" \
    "$(calc "$ev / $ws / 1e6")"
  seq_walls+=("$ws")
  mpirun --oversubscribe --allow-run-as-root -np "$ranks" "$bin" run "${args[@]}" \
    --out "$tmp/par-$i" >/dev/null
  read -r wp ev < <(stats "$tmp/par-$i")
  printf 'run %d, %d ranks: %8.3f s wall, %12d events, %6.2f M events/s, %6.2f M per rank\n' \
    "$i" "$ranks" "$wp" "$ev" "$(calc "$ev / $wp / 1e6")" "$(calc "$ev / $wp / 1e6 / $ranks")"
  par_walls+=("$wp")
  for f in "${files[@]}"; do
    cmp -s "$tmp/seq-$i/$f" "$tmp/par-$i/$f" || { echo "run $i: $f differs" >&2; exit 1; }
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms=$(median "${seq_walls[@]}")
mp=$(median "${par_walls[@]}")
printf 'median wall: 1 rank %.3f s, %d ranks %.3f s: speedup %.2fx\n' "$ms" "$ranks" "$mp" \
  "$(calc "$ms / $mp")"
echo "all partitioned runs byte-identical to the sequential run (${files[*]})"
