#!/usr/bin/env bash
# Held-out prediction error of `fabricsim calibrate` on the nccl-tests logs in tests/data/nccl/:
# each log's 4 largest sizes (fewer when fewer than 7: 3 are left to fit) are left out of the
# fit and predicted.
#   - curve fit: t = a + S/b per regime (no simulation), every log;
#   - through the simulator: link rate, launch and step latency fitted by simulating a scenario
#     with the log's layout (2 x 1 logs on the quickstart fabric, 2 x 8 on the rail fabric),
#     the 4 largest simulated sizes (up to 256 MiB) held out; and two by-file predictions.
# Prints one Markdown table. Run by hand (the simulated rows take minutes):
#   bash bench/calibration_heldout.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-build}/fabricsim"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
median() {  # the report's held-out median, or "-"
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
v = r.get("heldout_median_abs_pct_error")
w = r.get("heldout_max_abs_pct_error")
print("-" if v is None else "%.1f %% (worst %.1f %%)" % (v, w))
PY
}
echo "| log | curve fit, 4 largest held out | simulated, 4 largest held out |"
echo "|---|---|---|"
rail="scenarios/rail_optimized_h100_su.yaml --set topology.servers_per_su=4"
for f in tests/data/nccl/*.txt; do
  name=$(basename "$f" .txt)
  # Hold out the 4 largest sizes, or fewer so that 3 are left to fit.
  n=0
  if "$bin" calibrate --nccl-tests "$f" --out "$out/c.yaml" >"$out/c.txt" 2>&1; then
    n=$(python3 -c "import json,sys; f=json.load(open(sys.argv[1]))['inputs'][0].get('fit'); print(len(f['points']) if f else 0)" "$out/c.report.json")
  fi
  k=$((n - 3 < 4 ? n - 3 : 4))
  if [ "$n" -gt 0 ] && [ "$k" -lt 1 ]; then
    curve="$n sizes: too few to hold any out"
  elif "$bin" calibrate --nccl-tests "$f" --holdout "largest=$((k > 0 ? k : 4))" --out "$out/c.yaml" >"$out/c.txt" 2>&1; then
    curve="$(median "$out/c.report.json") [$k held out]"
    [ "$n" -eq 0 ] && curve="$(grep -o 'not fitted ([^)]*' "$out/c.txt" | head -1 | sed "s|$f: ||; s|not fitted (||")"
  else
    curve="refused: $(head -c 120 "$out/c.txt" | sed "s|$f||; s/|/\\\\|/g")"
  fi
  scen=""
  case "$name" in
    *2x1*|*t4-2node*|*v100-2node-roce25g*) scen="scenarios/quickstart.yaml" ;;
    *h100-2node-dgx*) scen="$rail" ;;
    *b200-2node*) scen="$rail --set transport=roce" ;;
  esac
  sim="-"
  if [ -n "$scen" ]; then
    # shellcheck disable=SC2086
    "$bin" calibrate --scenario $scen --nccl-tests "$f" --holdout largest=4 --out "$out/s.yaml" >"$out/s.txt" 2>&1 &&
      sim=$(median "$out/s.report.json")
  fi
  echo "| $name | $curve | $sim |"
done
echo
echo "| by file: fitted on → predicted | simulated, whole predicted log |"
echo "|---|---|"
h200ag=tests/data/nccl/nccl-allgather-h200-2x1-gcp-a3ultra-roce-gib-01.txt
h200ar=tests/data/nccl/nccl-allreduce-h200-2x1-gcp-a3ultra-roce-mpioperator-01.txt
b2x1=tests/data/nccl/nccl-allgather-b200-2x1-gcp-a4-roce-gib-01.txt
b2node=tests/data/nccl/nccl-allgather-b200-2node-gcp-a4-roce-gib-01.txt
pair() {  # SCENARIO FIT PREDICT
  # shellcheck disable=SC2086
  "$bin" calibrate --scenario $1 --nccl-tests "$2" --nccl-tests "$3" --holdout "file=$3" \
    --out "$out/p.yaml" >"$out/p.txt" 2>&1
  echo "| $(basename "$2" .txt) → $(basename "$3" .txt) | $(median "$out/p.report.json") |"
}
pair scenarios/quickstart.yaml "$h200ag" "$h200ar"
pair scenarios/quickstart.yaml "$h200ar" "$h200ag"
pair "$rail --set transport=roce" "$b2x1" "$b2node"
