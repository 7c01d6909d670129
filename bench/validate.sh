#!/usr/bin/env bash
# Predicted against measured: runs scenarios that name a real log (`measured.nccl_tests:` or
# `measured.perftest:`) and tabulates, per log, the simulated value beside the measured one at
# every size the two share and the median and worst error, with the error from a size up apart
# (nccl-tests: 1 MiB, where bandwidth rather than latency decides; perftest bandwidth: 64 B;
# perftest latency: every size).
#
#   bash bench/validate.sh                      # every scenario in bench/validation/, and every
#                                               # real log in tests/data/ without one, with why
#   bash bench/validate.sh my_cluster.yaml ...  # your own scenarios and logs
#   bash bench/validate.sh --markdown out.md    # also the whole report as Markdown (sizes too)
#   bash bench/validate.sh --markdown -         # the report alone, on stdout
#
# Options:
#   --fabricsim PATH            the binary (default: build/fabricsim, else fabricsim on PATH)
#   --min-size BYTES            where the nccl-tests "from" columns start (default 1048576)
#   --perftest-min-size BYTES   where the perftest bandwidth ones start (default 64)
#   --markdown FILE             write the report (summary, per-size tables, logs not compared)
#                               to FILE; - prints it instead of the summary
#   --set KEY=VALUE             passed to every run (repeatable), e.g. --set nic.mtu=4096B
#
# The scenarios in bench/validation/ are written from each cluster's published hardware and not
# fitted to the log they are compared with (see each file's comments; its `# validation-note:`
# lines say what the model leaves out there). bench/validation/not_covered.tsv lists the logs
# fabricsim does not claim to predict, with the reason (a transport or part it does not model,
# a log without data rows). A run's error is the simulated value's relative difference from the
# measured one, (simulated - measured) / measured, as `fabricsim run` prints it; the medians are
# of its absolute value. A log whose network transport fabricsim does not model (`fabricsim run`
# says so) is compared but its target reads "not a prediction". Exit 0; 1 when a run failed or
# a scenario names no measured log (the others still run and print); 2 for bad options.
set -u -o pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
bad() { echo "validate.sh: $*" >&2; exit 2; }

fabricsim=""
min_size=1048576
perftest_min_size=64
markdown=""
sets=()
scenarios=()
while [ $# -gt 0 ]; do
  case "$1" in
    --fabricsim|--min-size|--perftest-min-size|--markdown|--set)
      [ $# -ge 2 ] || bad "$1 takes a value (see --help)"
      case "$1" in
        --fabricsim) fabricsim="$2" ;;
        --min-size) min_size="$2" ;;
        --perftest-min-size) perftest_min_size="$2" ;;
        --markdown) markdown="$2" ;;
        --set) sets+=(--set "$2") ;;
      esac
      shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) bad "unknown option $1 (see --help)" ;;
    *) scenarios+=("$1"); shift ;;
  esac
done
for v in "$min_size" "$perftest_min_size"; do
  case "$v" in
    ''|*[!0-9]*) bad "--min-size and --perftest-min-size take bytes, e.g. 1048576; got '$v'" ;;
  esac
done
if [ -z "$fabricsim" ]; then
  if [ -x "$root/build/fabricsim" ]; then fabricsim="$root/build/fabricsim"
  else fabricsim="$(command -v fabricsim || true)"; fi
fi
if [ -z "$fabricsim" ] || [ ! -x "$fabricsim" ]; then
  bad "no fabricsim binary: build it (cmake --build build -j2 --target fabricsim) or pass --fabricsim PATH"
fi
if [ -n "$markdown" ] && [ "$markdown" != "-" ]; then
  dir="$(dirname -- "$markdown")"
  [ -d "$dir" ] && [ -w "$dir" ] || bad "--markdown $markdown: the folder $dir does not exist or is not writable"
  [ ! -d "$markdown" ] || bad "--markdown $markdown is a folder; expected a file name"
fi
all=0
if [ ${#scenarios[@]} -eq 0 ]; then
  all=1
  for f in "$here"/validation/nccl/*.yaml "$here"/validation/perftest/*.yaml; do
    [ -f "$f" ] && scenarios+=("$f")
  done
fi
for scen in "${scenarios[@]}"; do
  [ -f "$scen" ] || bad "$scen: no such scenario file"
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0

# One run: its comparison rows "size measured simulated error" into $work/N.rows, the lines
# fabricsim warned with into $work/N.warn, and its summary fields into $work/N.sum, separated by
# the ASCII unit separator (so empty fields stay): scenario, log, metric, rows, median, worst,
# worst at, from-rows, from-median, from-worst, wall s, note, exit code, the "from" size,
# "transport" when the log's network transport is not modelled, and for busbw the rows and
# median of the mid sizes (64 KiB to 32 MiB: where NCCL's protocols and pipelines decide).
n=0
for scen in "${scenarios[@]}"; do
  n=$((n + 1))
  out="$work/$n.out"
  start=$(date +%s.%N)
  "$fabricsim" run "$scen" "${sets[@]}" >"$out" 2>"$work/$n.err"
  rc=$?
  end=$(date +%s.%N)
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  # What the run compared with: its own "# measured" line (whatever the YAML's form).
  log="$(sed -n 's/^# measured   : //p' "$out" | head -n 1)"
  note="$(sed -n 's/^# validation-note: *//p' "$scen" | tr '\n' ' ' | sed 's/ *$//')"
  # The rows between "# measured" and the "error over" summary: "# SIZE MEAS SIM +E.E %".
  awk '/^# measured/ { m = 1; next }
       m && /error over/ { m = 0 }
       m && $1 == "#" && $2 ~ /^[0-9]+$/ && $NF == "%" { e = $(NF - 1); sub(/^\+/, "", e);
                                                          print $2, $3, $4, e }' "$out" >"$work/$n.rows"
  grep -h '^# warning\|^# not modelled' "$out" "$work/$n.err" |
    sed -E 's/^# (warning|not modelled) *: */\1: /' >"$work/$n.warn"
  unmodelled=""
  grep -q "^# not modelled: the measured log's network transport" "$out" && unmodelled=transport
  metric=$(sed -n 's/^#   \(.*\) error over .*/\1/p' "$out" | head -n 1)
  case "$metric" in
    busbw) min=$min_size ;;
    t_*) min=0 ;;  # a latency is held to its target at every size
    *) min=$perftest_min_size ;;
  esac
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then
    status=1
    echo "validate.sh: $scen: fabricsim run exited $rc: $(tail -n 3 "$work/$n.err" | tr '\n' ' ')" >&2
  elif [ -z "$log" ]; then
    status=1
    echo "validate.sh: $scen names no measured log (measured.nccl_tests or measured.perftest)" >&2
  fi
  awk -v scen="$scen" -v logf="$log" -v metric="${metric:-?}" -v min="$min" -v wall="$wall" \
      -v note="$note" -v rc="$rc" -v unmodelled="$unmodelled" '
    function median(a, k,   i, j, t) {  # sorts a[1..k] (insertion: a few dozen rows)
      for (i = 2; i <= k; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return k == 0 ? "" : (k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2)
    }
    { e = $4 < 0 ? -$4 : $4; all[++na] = e; if (e > worst) { worst = e; at = $1 }
      if ($1 >= min) { from[++nf] = e; if (e > fworst) fworst = e }
      if (metric == "busbw" && $1 >= 65536 && $1 <= 33554432) mid[++nm] = e }
    END {
      printf "%s\037%s\037%s\037%d\037%s\037%s\037%s\037%d\037%s\037%s\037%s\037%s\037%s\037%s\037%s\037%d\037%s\n",
             scen, logf, metric, na, median(all, na), na ? worst : "", na ? at : "", nf,
             median(from, nf), nf ? fworst : "", wall, note, rc, min, unmodelled, nm,
             median(mid, nm)
    }' "$work/$n.rows" >"$work/$n.sum"
done

fmt_pct() { awk -v v="$1" 'BEGIN { if (v == "") print "-"; else printf "%.1f %%", v }'; }
human() {  # bytes as nccl-tests users read them
  awk -v b="$1" 'BEGIN { if (b >= 1073741824 && b % 1073741824 == 0) printf "%d GiB", b / 1073741824;
    else if (b >= 1048576 && b % 1048576 == 0) printf "%d MiB", b / 1048576;
    else if (b >= 1024 && b % 1024 == 0) printf "%d KiB", b / 1024; else printf "%d B", b }'
}
sizes() { [ "$1" -eq 1 ] && echo "1 size" || echo "$1 sizes"; }

# The targets fabricsim is held to, from the "from" size up: an nccl-tests log's median busbw
# error at most 10 %; perftest's bandwidth within 5 % and its latency within 10 % at every size.
target() {  # metric, sizes, median, worst, unmodelled
  [ -z "$5" ] || { echo "not a prediction: the log's network transport is not modelled"; return; }
  [ "$2" -gt 0 ] || { echo "-"; return; }
  awk -v m="$1" -v med="$3" -v worst="$4" 'BEGIN {
    if (m == "busbw") { limit = 10; v = med; what = "median" }
    else if (m ~ /^t_/) { limit = 10; v = worst; what = "worst" }
    else { limit = 5; v = worst; what = "worst" }
    printf "%s %s <= %d %%", v <= limit ? "met:" : "missed:", what, limit }'
}

# The summary table, one line per scenario.
summary="$work/summary.md"
{
  printf '| log | scenario | compared | median error | worst (at) | from a size up: sizes, median, worst | 64 KiB-32 MiB: sizes, median | target | wall |\n'
  printf '|---|---|---|---|---|---|---|---|---|\n'
  for i in $(seq 1 "$n"); do
    IFS=$'\037' read -r scen log metric na med worst at nf fmed fworst wall note rc from unmodelled nm mmed <"$work/$i.sum"
    rel="${scen#"$root"/}"
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then
      printf '| %s | %s | run failed (exit %s) | - | - | - | - | - | %s s |\n' "$(basename "${log:--}")" "$rel" "$rc" "$wall"
      continue
    fi
    if [ -z "$log" ]; then
      printf '| - | %s | no measured log in the scenario | - | - | - | - | - | %s s |\n' "$rel" "$wall"
      continue
    fi
    if [ "$from" -eq 0 ]; then from_text="every size"; else from_text="from $(human "$from")"; fi
    if [ "${nm:-0}" -gt 0 ]; then mid_text="$nm, $(fmt_pct "$mmed")"; else mid_text="-"; fi
    printf '| %s | %s | %s, %s | %s | %s (%s) | %s: %s, %s, %s | %s | %s | %s s |\n' \
      "$(basename "$log")" "$rel" "$(sizes "$na")" "$metric" "$(fmt_pct "$med")" "$(fmt_pct "$worst")" \
      "$(human "${at:-0}")" "$from_text" "$nf" "$(fmt_pct "$fmed")" "$(fmt_pct "$fworst")" \
      "$mid_text" "$(target "$metric" "$nf" "$fmed" "$fworst" "$unmodelled")" "$wall"
  done
} >"$summary"

# Logs in tests/data without a scenario here: listed with the reason fabricsim gives for not
# predicting them (bench/validation/not_covered.tsv), or "no scenario yet".
others="$work/others.md"
: >"$others"
if [ "$all" -eq 1 ]; then
  for f in "$root"/tests/data/nccl/*.txt "$root"/tests/data/perftest/*.txt; do
    b="$(basename "$f")"
    grep -q "$b" "$work"/*.sum 2>/dev/null && continue
    why="$(awk -F'\t' -v b="$b" '$1 == b { print $2 }' "$here/validation/not_covered.tsv" 2>/dev/null)"
    printf '| %s | %s |\n' "$b" "${why:-no scenario yet}" >>"$others"
  done
fi

if [ "$markdown" != "-" ]; then
  cat "$summary"
  if [ -s "$others" ]; then
    echo
    echo "| log not compared | why |"
    echo "|---|---|"
    cat "$others"
  fi
fi

if [ -n "$markdown" ]; then
  markdown_to="$markdown"
  [ "$markdown" = "-" ] && markdown_to=/dev/stdout
  {
    echo "## Summary"
    echo
    # Without the wall-clock column: the report is the same file on every machine.
    sed -E 's/\|[^|]*\|$/|/' "$summary"
    echo
    echo "## Per size"
    for i in $(seq 1 "$n"); do
      IFS=$'\037' read -r scen log metric na med worst at nf fmed fworst wall note rc from unmodelled nm mmed <"$work/$i.sum"
      echo
      echo "### $(basename "${log:-${scen}}")"
      echo
      if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then
        echo "Scenario \`${scen#"$root"/}\`: the run failed (exit $rc)."
        continue
      fi
      if [ -z "$log" ]; then
        echo "Scenario \`${scen#"$root"/}\` names no measured log."
        continue
      fi
      echo "Scenario \`${scen#"$root"/}\`; ${metric}."
      [ -n "$note" ] && { echo; echo "$note"; }
      if [ -s "$work/$i.warn" ]; then
        echo
        sed 's/^/- fabricsim: /' "$work/$i.warn"
      fi
      [ -s "$work/$i.rows" ] || continue
      echo
      echo "| size | measured | simulated | error |"
      echo "|---:|---:|---:|---:|"
      awk '{ printf "| %s | %s | %s | %+.1f %% |\n", $1, $2, $3, $4 }' "$work/$i.rows"
    done
    if [ -s "$others" ]; then
      echo
      echo "## Logs not compared"
      echo
      echo "| log | why |"
      echo "|---|---|"
      cat "$others"
    fi
  } >"$markdown_to" || { echo "validate.sh: cannot write $markdown" >&2; exit 74; }
fi
exit "$status"
