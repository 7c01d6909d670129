#!/usr/bin/env bash
# Scale benchmarks, run by hand on a Release build:
#   1. packet level: Ring AllReduce of 64 MiB over the 128 servers of a k = 8 fat-tree, 400 Gb/s
#   2. packet level: AllReduce of 256 MiB on 1024 GPUs, rail-optimized (4 DGX H100 SuperPOD SUs)
#   3. flow level:   AllReduce size sweep (10 sizes, 1 MiB .. 512 MiB) on 16,384 GPUs (64 SUs)
# Prints wall time, events, events/s, packet-hops/s, peak RSS and memory per packet in flight
# (peak RSS / the packet pool's high-water mark, and the packet struct's own size).
# Usage: bench/scale.sh [FABRICSIM] [which: 1 2 3 ...]    (default ./build/fabricsim, all)
set -euo pipefail
cd "$(dirname "$0")/.."
FABRICSIM=${1:-${FABRICSIM:-./build/fabricsim}}
shift || true
WHICH=${*:-1 2 3}
OUT=${OUT:-/tmp/fabricsim-scale}
[ -x "$FABRICSIM" ] || { echo "bench/scale.sh: no fabricsim at $FABRICSIM (build Release first)" >&2; exit 2; }
mkdir -p "$OUT"

run() {  # name, then fabricsim arguments
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  "$FABRICSIM" run "$@" --trace-events 0 --out "$OUT/$name" > "$OUT/$name.txt"
  end=$(date +%s.%N)
  python3 - "$OUT/$name" "$name" "$start" "$end" <<'PY'
import json, sys
d, name, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
perf = json.load(open(d + "/perf.json"))
res = json.load(open(d + "/results.json"))
events = perf["events_per_s"] * perf["wall_s"]
rows = res["collectives"]
print(f"{name}: {res['fabric']['gpus']} GPUs, {res.get('mode', 'packet')} mode, "
      f"{len(rows)} size(s), last {rows[-1]['size_bytes']} B {rows[-1]['algorithm']}/"
      f"{rows[-1]['protocol']} busbw {rows[-1]['busbw_GBps']:.2f} GB/s")
print(f"  wall {perf['wall_s']:.2f} s (process {end - start:.2f} s), events {events:.3e}, "
      f"{perf['events_per_s'] / 1e6:.2f} M events/s, "
      f"{perf['packet_hops_per_s'] / 1e6:.2f} M packet-hops/s, "
      f"peak RSS {perf['peak_rss_bytes'] / 2**20:.0f} MiB")
if perf.get("peak_packets_in_flight"):
    n = perf["peak_packets_in_flight"]
    print(f"  packets in flight at peak {n}, {perf['peak_rss_bytes'] / n:.0f} B of RSS per packet "
          f"(struct {perf['packet_struct_bytes']} B)")
if "flow_model" in res:
    f = res["flow_model"]
    print(f"  flows {f['flows']}, rate computations {f['rate_computations']}, "
          f"at most {f['max_active_flows']} flows at once")
PY
}

for w in $WHICH; do
  case $w in
    1) run fat_tree_k8_ring_64MiB scenarios/fat_tree_k8.yaml --set nccl.algo=Ring \
         --set workload.minbytes=64MiB --set workload.maxbytes=64MiB ;;
    2) run rail_1024_256MiB scenarios/rail_optimized_h100_su.yaml \
         --set topology.rail-optimized.scalable_units=4 --set topology.rail-optimized.spines=16 \
         --set workload.minbytes=256MiB --set workload.maxbytes=256MiB ;;
    3) run rail_16384_flow scenarios/rail_optimized_h100_su.yaml --mode flow \
         --set topology.rail-optimized.scalable_units=64 --set topology.rail-optimized.spines=32 \
         --set switch.radix=1024 --set workload.minbytes=1MiB --set workload.maxbytes=512MiB \
         --set workload.stepfactor=2 ;;
    *) echo "bench/scale.sh: unknown benchmark '$w' (1, 2 or 3)" >&2; exit 2 ;;
  esac
done
