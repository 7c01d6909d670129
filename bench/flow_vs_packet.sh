#!/usr/bin/env bash
# Every shipped scenario in the packet and the flow mode, side by side (docs/flow-mode.md,
# "Every shipped scenario"). Run by hand on a Release build:
#   bench/flow_vs_packet.sh [FABRICSIM] [SIZE ...]      (default ./build/fabricsim, 1MiB 16MiB)
# For each scenarios/*.yaml and size: the flow mode's time against the packet mode's, or the
# reason the flow mode refuses the scenario (exit 2 at `validate`). Outputs go to $OUT (default
# /tmp/fabricsim-flow-vs-packet). The packet runs take about 20 s in all on 2 cores.
set -euo pipefail
FABRICSIM=${1:-./build/fabricsim}
shift || true
# A path given relative to where the script was started from, not to the repository.
[ -x "$FABRICSIM" ] && FABRICSIM=$(cd "$(dirname "$FABRICSIM")" && pwd)/$(basename "$FABRICSIM")
cd "$(dirname "$0")/.."
SIZES=${*:-1MiB 16MiB}
OUT=${OUT:-/tmp/fabricsim-flow-vs-packet}
[ -x "$FABRICSIM" ] || { echo "bench/flow_vs_packet.sh: no fabricsim at $FABRICSIM" >&2; exit 2; }
mkdir -p "$OUT"
printf '| scenario | size | packet: algorithm/protocol, time (us) | flow: time (us) | flow / packet |\n'
printf '|---|---:|---|---:|---:|\n'
for f in scenarios/*.yaml; do
  name=$(basename "$f" .yaml)
  if ! "$FABRICSIM" validate "$f" --mode flow > /dev/null 2> "$OUT/$name.refused"; then
    why=$(grep -o 'mode: .*' "$OUT/$name.refused" | head -1 | sed 's/|/\\|/g')
    printf '| %s | | refused: %s | | |\n' "$name" "${why:-$(head -1 "$OUT/$name.refused")}"
    continue
  fi
  for size in $SIZES; do
    for mode in packet flow; do
      "$FABRICSIM" run "$f" --mode "$mode" --set workload.minbytes="$size" \
        --set workload.maxbytes="$size" --trace-events 0 --out "$OUT/$name-$size-$mode" \
        > /dev/null || { echo "bench/flow_vs_packet.sh: $name $size --mode $mode failed" >&2; exit 1; }
    done
    python3 - "$OUT/$name-$size" "$name" "$size" <<'PY'
import json, sys
base, name, size = sys.argv[1:]
packet = json.load(open(base + "-packet/results.json"))["collectives"]
flow = json.load(open(base + "-flow/results.json"))["collectives"]
for p, q in zip(packet, flow):
    pick = f"{p['algorithm']}/{p['protocol']}"
    note = "" if (q["algorithm"], q["protocol"]) == (p["algorithm"], p["protocol"]) else \
        f" (flow runs {q['algorithm']}/{q['protocol']}: said under `# not modelled`)"
    pct = 100 * (q["time_us"] / p["time_us"] - 1)
    print(f"| {name} | {size} | {pick}, {p['time_us']:.1f} | {q['time_us']:.1f}{note} | "
          f"{pct:+.1f} % |")
PY
  done
done
