#!/usr/bin/env bash
# Runs the libFuzzer targets for a fixed time each, by hand or as CI's smoke run.
#   fuzz/run.sh [SECONDS per target, default 600] [TARGET ...]   (default: all six)
# Builds them first with clang into build-fuzz/ (FABRICSIM_FUZZ=ON: ASan + UBSan + libFuzzer).
# Seeds: scenarios/, configs/, tests/data/, tests/bad_inputs/ (scenario); tests/data/perftest and
# tests/data/nccl (the log parsers); unit strings from the scenarios (units); none for
# fuzz_log_plausibility, which builds its logs from the fuzzer's bytes; every --set and
# --vary written in the catalogue, README and CLI tests, and values for the first 300 keys
# (fuzz_set; the record format is in fuzz/fuzz_set.cpp). Corpora grow in
# build-fuzz/corpus/TARGET; a crash, an uncaught exception, a leak, a timeout (> 10 s for one
# input) or an allocation over 2 GB is written to build-fuzz/findings/TARGET/ and reported.
# Prints per target: runs, executions, corpus size, findings. Exit 1 when anything was found.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER=${1:-600}
shift || true
TARGETS=${*:-fuzz_units fuzz_perftest fuzz_nccl_log fuzz_log_plausibility fuzz_scenario fuzz_set}
B=${FUZZ_BUILD:-build-fuzz}
command -v clang++ >/dev/null || { echo "fuzz/run.sh: clang++ not found (apt-get install -y clang)" >&2; exit 2; }
mkdir -p "$B"
CC=clang CXX=clang++ cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFABRICSIM_FUZZ=ON \
  -DFABRICSIM_BUILD_TESTS=OFF -DFABRICSIM_BUILD_BENCH=OFF > "$B/configure.log" 2>&1 ||
  { cat "$B/configure.log" >&2; exit 2; }
# shellcheck disable=SC2086
cmake --build "$B" -j2 --target $TARGETS

seed() {  # target -> seed directory
  local t=$1 d="$B/seeds/$1"
  rm -rf "$d" && mkdir -p "$d"
  case $t in
    fuzz_units)
      # Every scalar value written in the scenarios, one per file.
      grep -ho ':[[:space:]]*[0-9][0-9.eE+-]*[[:space:]]*[A-Za-z/]*' scenarios/*.yaml configs/*.yaml |
        sed 's/^:[[:space:]]*//' | sort -u | awk -v d="$d" '{ f = d "/" NR; printf "%s", $0 > f; close(f) }' ;;
    fuzz_perftest) cp tests/data/perftest/* "$d/" ;;
    fuzz_nccl_log) cp tests/data/nccl/* "$d/" ;;
    fuzz_log_plausibility) ;;  # its input is a recipe for a log, not a log
    fuzz_scenario)
      for f in scenarios/*.yaml configs/*.yaml configs/*/*.yaml tests/data/config/*.yaml \
               tests/data/cli/*.yaml tests/bad_inputs/*.yaml; do
        [ -f "$f" ] && cp "$f" "$d/$(echo "$f" | tr / _)"
      done ;;
    fuzz_set)
      # Each KEY=VALUE as written (a raw record: byte 0xF0, then the text), on a scenario picked
      # by its number; then a value for each key index (byte 0, index low byte, index high byte).
      local n=0 kv hex
      while IFS= read -r kv; do
        n=$((n + 1))
        printf "\\x$(printf %02x $((n % 7)))\\xf0%s" "$kv" > "$d/raw$n"
      done < <(grep -ohE -- "--(set|vary) ('[^']*'|\"[^\"]*\"|[^ '\"]+)" tests/bad_inputs/*.expect \
                 README.md docs/*.md tests/cli/*.cpp | sed -E "s/^--(set|vary) //; s/^['\"]//; s/['\"]\$//" |
                 grep '=' | sort -u)
      local values=(1 0 4 true 400Gbps 1us 1MiB 100KB 1e-8 "[3, 4]" "{}" auto 0.5 3:1 leaf0-spine0)
      for i in $(seq 0 299); do
        hex=$(printf '\\x%02x\\x00\\x%02x\\x%02x' $((i % 7)) $((i % 256)) $((i / 256)))
        printf "$hex%s" "${values[$((i % ${#values[@]}))]}" > "$d/key$i"
      done ;;
  esac
  echo "$d"
}

found=0
printf '%-15s %8s %12s %8s %s\n' target seconds executions corpus findings
for t in $TARGETS; do
  corpus="$B/corpus/$t" findings="$B/findings/$t"
  rm -rf "$findings"  # findings of an earlier run (perhaps fixed since) are not this run's
  mkdir -p "$corpus" "$findings"
  seeds=$(seed "$t")
  log="$B/$t.log"
  # -fork would survive a crash and go on; one process stops at the first finding, which is
  # what a smoke run wants.
  set +e
  "$B/fuzz/$t" "$corpus" "$seeds" -max_total_time="$SECONDS_PER" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -artifact_prefix="$findings/" -print_final_stats=1 > "$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  n_found=$(find "$findings" -type f | wc -l)
  printf '%-15s %8s %12s %8s %s\n' "$t" "$SECONDS_PER" "${execs:-0}" "$(find "$corpus" -type f | wc -l)" \
    "$n_found$( [ "$rc" -ne 0 ] && echo " (exit $rc, see $log)")"
  if [ "$rc" -ne 0 ] || [ "$n_found" -gt 0 ]; then found=1; fi
done
exit $found
