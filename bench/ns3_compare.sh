#!/usr/bin/env bash
# fabricsim vs ns-3 on the same fabric and traffic: a leaf-spine of 8 leaves x 8 hosts and
# 8 spines, every link 100 Gb/s with 1 us propagation, host j of leaf l sending 1 MB to host j of
# leaf (l+1) mod 8. fabricsim runs bench/leafspine_permutation.yaml (RoCE, PFC and ECN on);
# ns-3 runs bench/ns3/leafspine_permutation.cc (TCP, per-packet random ECMP), compiled here with
# g++ -O2 against Debian's libns3-dev. Prints wall time, simulated completion time, packets
# delivered, packet-hops and packet-hops per second for each, and the fabricsim/ns-3 ratio.
#
# usage: bench/ns3_compare.sh [FABRICSIM_BINARY]
#   FABRICSIM_BINARY (or env FABRICSIM): default ./build/fabricsim
#   env OUT        : work directory (default /tmp/fabricsim-ns3-compare)
#   env NS3_ARGS   : extra ns-3 program options, e.g. "--initCwnd=1000"
#   env FS_ARGS    : extra `fabricsim run` options, e.g. "--set routing.load_balancing=per_packet"
#   env RUNS       : runs of each simulator (default 1); the table shows each one's median wall time
#   env INSTALL_NS3=1 : apt-get install libns3-dev if it is missing (needs root)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fs="${1:-${FABRICSIM:-./build/fabricsim}}"
out="${OUT:-/tmp/fabricsim-ns3-compare}"
scenario="$here/leafspine_permutation.yaml"
src="$here/ns3/leafspine_permutation.cc"

die() { echo "ns3_compare: $*" >&2; exit 2; }

[[ -x "$fs" ]] || die "no fabricsim binary at '$fs' (pass its path as the first argument or set FABRICSIM; build: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2 --target fabricsim)"
fs="$(cd "$(dirname "$fs")" && pwd)/$(basename "$fs")"
command -v g++ >/dev/null || die "g++ not found (apt-get install -y g++)"
command -v python3 >/dev/null || die "python3 not found (used to read the JSON outputs)"

ns3_libdir=/usr/lib/x86_64-linux-gnu
if [[ ! -f /usr/include/ns3/core-module.h || ! -e "$ns3_libdir/libns3-core.so" ]]; then
  if [[ "${INSTALL_NS3:-0}" == 1 && "$(id -u)" == 0 ]]; then
    echo "ns3_compare: libns3-dev missing, installing it" >&2
    apt-get install -y libns3-dev >&2
  else
    die "ns-3 development files not found (/usr/include/ns3/core-module.h). Install them with
  apt-get install -y libns3-dev      # Debian 12: ns-3 3.37
or rerun as root with INSTALL_NS3=1."
  fi
fi

mkdir -p "$out"
bin="$out/ns3-leafspine"
# Debian's ns3-*.pc files carry a broken Cflags entry ("-I/usr\;"), so link the libraries directly.
if [[ ! -x "$bin" || "$src" -nt "$bin" ]]; then
  echo "ns3_compare: compiling $src" >&2
  g++ -O2 -std=c++17 -I/usr/include "$src" -o "$bin" \
    -lns3-applications -lns3-internet -lns3-traffic-control -lns3-point-to-point \
    -lns3-network -lns3-core || die "compiling the ns-3 program failed"
fi

runs="${RUNS:-1}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, not '$runs'"
for ((i = 1; i <= runs; i++)); do
  echo "ns3_compare: run $i/$runs: fabricsim ($fs)" >&2
  rm -rf "$out/fabricsim-$i"
  # --trace-events 0: no trace.json recording during the run (ns-3 records nothing either).
  # shellcheck disable=SC2086
  "$fs" run "$scenario" --out "$out/fabricsim-$i" --trace-events 0 ${FS_ARGS:-} >"$out/fabricsim-$i.log" \
    || die "fabricsim run failed (see $out/fabricsim-$i.log)"
  echo "ns3_compare: run $i/$runs: ns-3 ($bin)" >&2
  # Logging stays off: NS_LOG is unset (Debian's libns3 has NS_LOG compiled in, NS_ASSERT out).
  # shellcheck disable=SC2086
  env -u NS_LOG "$bin" ${NS3_ARGS:-} >"$out/ns3-$i.log" || die "ns-3 run failed (see $out/ns3-$i.log)"
done

python3 - "$out" "$runs" <<'EOF'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
def median_run(walls):  # index of the run with the median wall time (lower median)
    order = sorted(range(len(walls)), key=lambda i: walls[i])
    return order[(len(order) - 1) // 2] + 1
fs_walls = [json.load(open(f"{out}/fabricsim-{i}/perf.json"))["wall_s"] for i in range(1, runs + 1)]
ns_lines = [next(l for l in open(f"{out}/ns3-{i}.log") if l.startswith("ns3 ")) for i in range(1, runs + 1)]
ns_kvs = [dict(f.split("=", 1) for f in l.split()[1:]) for l in ns_lines]
ns_walls = [float(kv["wall_s"]) for kv in ns_kvs]
fi, ni = median_run(fs_walls), median_run(ns_walls)
perf = json.load(open(f"{out}/fabricsim-{fi}/perf.json"))
res = json.load(open(f"{out}/fabricsim-{fi}/results.json"))
ports = res["ports"]
# results.json has no packet counters; its per-port table does (ports without traffic are left out).
hops = sum(p["tx_packets"] for p in ports)
delivered = sum(p["rx_packets"] - p["pfc_rx"] for p in ports if p["node"].startswith("host"))
fs = dict(wall=perf["wall_s"], sim_us=res["run"]["simulated_ps"] / 1e6, delivered=delivered,
          hops=hops, hps=perf["packet_hops_per_s"], flows=f'{res["flows"]["completed"]}/{res["flows"]["count"]}')
if not res["run"]["complete"]:
    sys.exit(f"fabricsim run incomplete: {res['run']['stop_reason']}")
kv = ns_kvs[ni - 1]
ns = dict(wall=float(kv["wall_s"]), sim_us=float(kv["sim_time_us"]), delivered=int(kv["packets_delivered"]),
          hops=int(kv["packet_hops"]), hps=float(kv["packet_hops_per_s"]), flows=kv["flows_done"])
if runs > 1:
    print(f"{runs} runs each; wall_s fabricsim {' '.join(f'{w:.4f}' for w in fs_walls)}; "
          f"ns-3 {' '.join(f'{w:.4f}' for w in ns_walls)}; the table shows the median run")
hdr = f'{"simulator":<10} {"wall_s":>9} {"sim_time_us":>12} {"flows":>6} {"pkts_delivered":>15} {"packet_hops":>12} {"packet_hops/s":>14}'
print(hdr)
print("-" * len(hdr))
for name, r in (("fabricsim", fs), ("ns-3", ns)):
    print(f'{name:<10} {r["wall"]:>9.4f} {r["sim_us"]:>12.3f} {r["flows"]:>6} {r["delivered"]:>15} {r["hops"]:>12} {r["hps"]:>14.0f}')
print(f'ratio fabricsim/ns-3 packet-hops/s: {fs["hps"] / ns["hps"]:.2f}x   '
      f'(closed form: 1 MB at 100 Gb/s = 80 us of payload; ns-3 setup {float(kv["setup_s"]):.3f} s '
      f'not in its wall_s; ns-3 events {kv["events"]}, fabricsim events {res["run"]["events"]})')
EOF
