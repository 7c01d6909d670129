# Functions for the markers of README.md and docs/*.md (docs/testing.md "Keeping the
# documentation true"). tests/docs/readme_doc
# sources this file before each marker's command, from the top folder, with `fabricsim` (the
# build's binary, each distinct command line run once), `json FILE PATH` and `region ID`
# defined. Plain bash, coreutils and awk (mawk: no gawk extensions); LC_ALL=C.

# human_bytes N: 1024-based, as the README writes sizes: 8192 -> "8 KiB", 5000000 -> "5000000 B".
human_bytes() {
  awk -v n="$1" 'BEGIN {
    split("B KiB MiB GiB TiB", u, " "); i = 1
    while (n >= 1024 && n % 1024 == 0 && i < 5) { n /= 1024; i++ }
    printf "%d %s\n", n, u[i] }'
}

# pct A B: (B - A) / A as the README writes a difference: "+3.4 %", "−11.0 %", "0.0 %"
# (U+2212 minus). `pct0` rounds to whole percents.
pct() { awk -v a="$1" -v b="$2" -v f="${3:-%.1f}" 'BEGIN {
  s = sprintf(f, 100 * (b - a) / a); if (s + 0 == 0) { sub(/^-/, "", s); print s " %"; exit }
  if (s + 0 > 0) s = "+" s; else sub(/^-/, "\342\210\222", s); print s " %" }'; }
pct0() { pct "$1" "$2" %.0f; }

# nccl_rows: the data rows of an nccl-tests table on stdin, "size time_us algorithm protocol".
nccl_rows() { awk '$1 ~ /^[0-9]+$/ && NF >= 13 { print $1, $6, $(NF-1), $NF }'; }

# protocol_changes: a `fabricsim run` output on stdin cut to its comment lines and the table
# rows where NCCL's choice of algorithm or protocol changes (both sides), with the first and
# last rows; "..." stands for the rows left out.
protocol_changes() {
  awk '
    $1 !~ /^[0-9]+$/ { flush(); print; next }
    { n++; row[n] = $0; key[n] = $(NF-1) " " $NF }
    function flush(   i, keep, last) {
      if (!n) return
      for (i = 1; i <= n; i++)
        keep[i] = (i == 1 || i == n || (i > 1 && key[i] != key[i-1]) || (i < n && key[i] != key[i+1]))
      last = 0
      for (i = 1; i <= n; i++) if (keep[i]) { if (last && i > last + 1) print "..."; print row[i]; last = i }
      n = 0
    }
    END { flush() }'
}

# protocol_phrase: which algorithm and protocol NCCL picked over the sizes of a `fabricsim run`
# table on stdin, as prose: "Tree with LL up to 128 KiB, Tree with LL128 to 32 MiB and Ring with
# Simple above".
protocol_phrase() {
  nccl_rows | awk '
    function name(s) { return s == "ll" ? "LL" : s == "ll128" ? "LL128" : s == "simple" ? "Simple" : toupper(substr(s, 1, 1)) substr(s, 2) }
    { k = name($3) " with " name($4); if (k != key[m]) key[++m] = k; upto[m] = $1 }
    END { for (i = 1; i <= m; i++) print key[i] "\t" upto[i] }' |
    { local parts=() k s n=0
      while IFS=$'\t' read -r k s; do parts+=("$k" "$s"); n=$((n + 1)); done
      local out="" i
      for ((i = 0; i < n; i++)); do
        k=${parts[2 * i]} s=${parts[2 * i + 1]}
        if [ $n = 1 ]; then out="$k at every size"
        elif [ $i = 0 ]; then out="$k up to $(human_bytes "$s")"
        elif [ $i = $((n - 1)) ]; then out="$out and $k above"
        else out="$out, $k to $(human_bytes "$s")"; fi
      done
      echo "$out"; }
}

# busbw_at SIZE: the busbw column of the row of SIZE bytes in a `fabricsim run` table on stdin.
busbw_at() { awk -v s="$1" '$1 == s && NF >= 13 { print $8 }'; }

# csv_table FILE 'Header=column[:format]'...: a markdown table of the named columns of a CSV
# file with a header row. format: a printf format (%.3f), MB (bytes as "3.4 MB"), ms (us as
# "17.7 ms"); the value as it is without one.
csv_table() {
  local file=$1; shift
  awk -F, -v specs="$(printf '%s\n' "$@")" '
    BEGIN { n = split(specs, s, "\n"); for (i = 1; i <= n; i++) {
      eq = index(s[i], "="); head[i] = substr(s[i], 1, eq - 1); rest = substr(s[i], eq + 1)
      c = index(rest, ":"); col[i] = c ? substr(rest, 1, c - 1) : rest; fmt[i] = c ? substr(rest, c + 1) : "" } }
    NR == 1 { for (j = 1; j <= NF; j++) at[$j] = j
      for (i = 1; i <= n; i++) if (!(col[i] in at)) { print "csv_table: no column " col[i] > "/dev/stderr"; exit 1 }
      line = "|"; sep = "|"; for (i = 1; i <= n; i++) { line = line " " head[i] " |"; sep = sep "---|" }
      print line; print sep; next }
    { line = "|"; for (i = 1; i <= n; i++) { v = $(at[col[i]])
        if (fmt[i] == "MB") v = sprintf("%.1f MB", v / 1e6)
        else if (fmt[i] == "ms") v = sprintf("%.1f ms", v / 1e3)
        else if (fmt[i] != "") v = sprintf(fmt[i], v)
        line = line " " v " |" }
      print line }' "$file"
}

# md_columns COLUMN...: the rows of a markdown table on stdin (sweep.md) with only the named
# columns, each cell as it is.
md_columns() {
  awk -v names="$*" '
    BEGIN { n = split(names, want, " ") }
    !/^\|/ { next }
    { m = split($0, cell, "|") }
    !header { header = 1; for (j = 2; j < m; j++) { h = cell[j]; gsub(/ /, "", h); at[h] = j }
      for (i = 1; i <= n; i++) if (!(want[i] in at)) { print "md_columns: no column " want[i] > "/dev/stderr"; exit 1 } }
    { line = "|"; for (i = 1; i <= n; i++) line = line cell[at[want[i]]] "|"; print line }'
}

# flow_vs_packet SCENARIO ARGS...: runs `fabricsim run SCENARIO ARGS` in the packet and the flow
# mode and prints per size "size_bytes packet_us flow_us algorithm protocol".
flow_vs_packet() {
  local scenario=$1; shift
  local dir
  dir=out/flow-vs-packet-$(printf '%s\0' "$scenario" "$@" | sha1sum | cut -c1-12)
  fabricsim run "$scenario" "$@" --mode packet --out "$dir-packet" >/dev/null || return 1
  fabricsim run "$scenario" "$@" --mode flow --out "$dir-flow" >/dev/null || return 1
  paste -d ' ' <(json "$dir-packet/results.json" 'collectives[*].size_bytes') \
    <(json "$dir-packet/results.json" 'collectives[*].time_us') \
    <(json "$dir-flow/results.json" 'collectives[*].time_us') \
    <(json "$dir-packet/results.json" 'collectives[*].algorithm') \
    <(json "$dir-packet/results.json" 'collectives[*].protocol')
}

# one_switch G ARGS...: flow_vs_packet on the flow mode's reference fabric, the quickstart's 16
# GPUs under one switch (400 Gb/s links), G GPUs per NVSwitch server (NVLink 3600 Gb/s).
one_switch() {
  local g=$1; shift
  if [ "$g" = 1 ]; then
    flow_vs_packet scenarios/quickstart.yaml \
      --set 'topology={kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 16}' "$@"
  else
    flow_vs_packet scenarios/quickstart.yaml --set link.nvlink_rate=3600Gbps --set \
      "topology={kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 16, gpus_per_server: $g}" "$@"
  fi
}

# diffs: flow_vs_packet's rows on stdin as "size_bytes difference" (pct).
diffs() { while read -r s p f _; do echo "$s $(pct "$p" "$f")"; done; }

# pct_range: the smallest and largest of the differences on stdin (second field, "+3.4 %"),
# as "+3.4 % to +8.0 %" (one value: "+3.4 %"). `pct_range0` in whole percents.
pct_range() { _pct_range "${1:-%.1f}"; }
pct_range0() { _pct_range %.0f; }
_pct_range() {
  sed 's/\xe2\x88\x92/-/' | awk -v f="$1" '
    function show(x,   s) { s = sprintf(f, x); if (s + 0 == 0) { sub(/^-/, "", s); return s " %" }
      if (s + 0 > 0) return "+" s " %"; sub(/^-/, "\342\210\222", s); return s " %" }
    { v = $2 + 0; if (NR == 1 || v < lo) lo = v; if (NR == 1 || v > hi) hi = v }
    END { if (!NR) exit 1; a = show(lo); b = show(hi); print (a == b ? a : a " to " b) }'
}

# max_abs_pct: the largest |difference| on stdin (second field), as "2.5 %".
max_abs_pct() {
  sed 's/\xe2\x88\x92/-/' | awk -v f="${1:-%.1f}" '
    { v = $2 < 0 ? -$2 : $2; if (v > m) m = v } END { if (!NR) exit 1; printf f " %%\n", m }'
}

# flow_table 'LABEL: COMMAND'...: a markdown table of the packet and the flow mode's times per
# size, three columns per LABEL (its packet time, flow time and difference) from COMMAND's
# flow_vs_packet rows (COMMAND: a shell command, e.g. `one_switch 4 --set nccl.algo=Ring`).
flow_table() {
  local head="| size |" sep="| ---: |" files=() spec f
  for spec; do
    head="$head ${spec%%:*} packet (µs) | ${spec%%:*} flow (µs) | diff |"
    sep="$sep ---: | ---: | ---: |"
    f=$(mktemp)
    files+=("$f")
    eval "${spec#*:}" >"$f" || { rm -f "${files[@]}"; return 1; }
  done
  echo "$head"
  echo "$sep"
  local s row p fl
  for s in $(awk '{ print $1 }' "${files[0]}"); do
    row="| $(human_bytes "$s") |"
    for f in "${files[@]}"; do
      read -r p fl < <(awk -v s="$s" '$1 == s { print $2, $3 }' "$f")
      [ -n "$p" ] || { echo "flow_table: no size $s in every run" >&2; rm -f "${files[@]}"; return 1; }
      row="$row $(printf '%.1f' "$p") | $(printf '%.1f' "$fl") | $(pct "$p" "$fl") |"
    done
    echo "$row"
  done
  rm -f "${files[@]}"
}

# ms US: microseconds as the README writes milliseconds: "0.73 ms", "7.0 ms", "14.5 ms", "142 ms"
# (`ms_n` without the unit).
ms_n() { awk -v u="$1" 'BEGIN { m = u / 1000; printf (m < 1 ? "%.2f\n" : m < 100 ? "%.1f\n" : "%.0f\n"), m }'; }
ms() { echo "$(ms_n "$1") ms"; }

# us_of_ps PS: picoseconds as whole microseconds, "837 µs".
us_of_ps() { awk -v p="$1" 'BEGIN { printf "%.0f µs\n", p / 1e6 }'; }

# thousands N: "124072" -> "124,072".
thousands() { echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|[,.]\)/\1,\2\3/; ta'; }

# cycle FILE [switches]: a results.json's deadlock cycle as `a -> b -> c` (in backticks);
# `switches` keeps the switch names only.
cycle() {
  json "$1" 'deadlock.cycle[*]' | { if [ "${2:-}" = switches ]; then cut -d: -f1; else cat; fi; } |
    awk 'BEGIN { ORS = "" } { print (NR > 1 ? " -> " : "`") $0 } END { print "`\n" }'
}

# fct_range FILE AWK-CONDITION: the smallest and largest FCT of the flows.csv rows that match
# (e.g. '$3 == 4': every flow into host 4), as "3.7–142 ms" (one flow: "7.0 ms").
fct_range() {
  local lo hi
  read -r lo hi < <(awk -F, "NR > 1 && ($2) { if (!n++ || \$9 < lo) lo = \$9; if (\$9 > hi) hi = \$9 } END { if (n) print lo, hi }" "$1")
  [ -n "$lo" ] || { echo "fct_range: no flow matches $2" >&2; return 1; }
  if [ "$(ms_n "$lo")" = "$(ms_n "$hi")" ]; then ms "$lo"; else echo "$(ms_n "$lo")–$(ms "$hi")"; fi
}

# pct_list: flow_vs_packet's rows on stdin as "1 MiB +10 %, 2 MiB +19 %" (whole percents).
pct_list() {
  local s p f out=""
  while read -r s p f _; do out="$out${out:+, }$(human_bytes "$s") $(pct0 "$p" "$f")"; done
  [ -n "$out" ] && echo "$out"
}

# pct_with_choice: flow_vs_packet's one row on stdin as "+19 % (Tree/LL128)".
pct_with_choice() {
  local s p f a r
  read -r s p f a r || return 1
  a=$(echo "$a" | awk '{ print toupper(substr($0, 1, 1)) substr($0, 2) }')
  r=$(echo "$r" | awk '{ print ($0 == "ll" || $0 == "ll128") ? toupper($0) : toupper(substr($0, 1, 1)) substr($0, 2) }')
  echo "$(pct0 "$p" "$f") ($a/$r)"
}

# bytes_short N: "4 KB", "0.62 MB", "4.4 MB" (10^3 units).
bytes_short() {
  awk -v b="$1" 'BEGIN { if (b < 1e5) printf "%.0f KB\n", b / 1e3; else if (b < 1e6) printf "%.2f MB\n", b / 1e6; else printf "%.1f MB\n", b / 1e6 }'
}

# families_table SWEEP.CSV: a sweep over topology.kind x topology.oversubscription x
# workload.collective (all_reduce, alltoall) as one row per fabric: busbw at the largest size of
# each collective, the alltoall's worst port p99 queue, the cost proxy and the GPUs; a family's
# unbuildable ratios share one row.
families_table() {
  echo "| topology.kind | ratio | all_reduce busbw (GB/s) | alltoall busbw (GB/s) | worst p99 queue, alltoall | cost_usd | gpus |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
  awk -F, '
    NR == 1 { for (j = 1; j <= NF; j++) at[$j] = j; next }
    { k = $(at["topology.kind"]) SUBSEP $(at["topology.oversubscription"])
      if (!(k in seen)) { seen[k] = 1; order[++n] = k }
      c = $(at["workload.collective"]); status[k] = status[k] " " $(at["status"])
      busbw[k, c] = $(at["busbw_at_max_size_GBps"]); gpus[k] = $(at["gpus"]); cost[k] = $(at["cost_usd"])
      if (c == "alltoall") q[k] = $(at["worst_port_p99_queue_bytes"]) }
    END { for (i = 1; i <= n; i++) { k = order[i]; split(k, kr, SUBSEP)
        print kr[1], kr[2], (status[k] ~ /unbuildable/ ? "unbuildable" : "built"), busbw[k, "all_reduce"], busbw[k, "alltoall"], q[k], cost[k], gpus[k] } }' "$1" |
    while read -r kind ratio st ar a2a queue cost gpus; do
      if [ "$st" = unbuildable ]; then
        echo "$kind $ratio"
      else
        printf '| %s | %s | %.2f | %.2f | %s | %s | %s |\n' "$kind" "$ratio" "$ar" "$a2a" \
          "$(bytes_short "$queue")" "$(thousands "$cost")" "$gpus"
      fi
    done | awk '
      /^\|/ { flush(); print; next }
      { if ($1 != kind) flush(); kind = $1; ratios = ratios (ratios == "" ? "" : ", ") $2 }
      function flush() { if (ratios != "") print "| " kind " | " ratios " | unbuildable | | | | |"; ratios = "" }
      END { flush() }'
}

# routing_table DIR: a sweep over topology.oversubscription, routing.load_balancing and
# nic.loss_recovery (DIR/sweep.csv) as a Markdown table with each point's retransmission
# counters (DIR/point-NNN/results.json).
routing_table() {
  echo "| ratio | routing.load_balancing | nic.loss_recovery | busbw (GB/s) | time (µs) | retransmits | NAKs | timeouts |"
  echo "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |"
  awk -F, 'NR == 1 { for (j = 1; j <= NF; j++) at[$j] = j; next }
    { print $(at["point"]), $(at["topology.oversubscription"]), $(at["routing.load_balancing"]),
        $(at["nic.loss_recovery"]), $(at["busbw_at_max_size_GBps"]), $(at["simulated_us"]) }' "$1/sweep.csv" |
    while read -r point ratio lb lr busbw us; do
      r="$1/point-$(printf %03d "$point")/results.json"
      printf '| %s:1 | %s | %s | %.2f | %.1f | %s | %s | %s |\n' "$ratio" "$lb" "$lr" "$busbw" "$us" \
        "$(thousands "$(json "$r" counters.retransmits)")" "$(thousands "$(json "$r" counters.nak_tx)")" \
        "$(json "$r" counters.rto_timeouts)"
    done
}

# md_rows: the body rows of a markdown table on stdin, one field per cell ($1 the first), the
# cells' spaces removed ("4.4 MB" -> "4.4MB", an empty cell "-").
md_rows() {
  awk -F'|' '/^\|/ && ++n > 2 { line = ""; for (j = 2; j < NF; j++) { c = $j; gsub(/ /, "", c); line = line (j > 2 ? " " : "") (c == "" ? "-" : c) }; print line }'
}

# measured_rows: the "# measured" block of a `fabricsim run` output on stdin as rows
# "size_bytes measured_busbw simulated_busbw error" (error as the README writes it: "−2.9 %").
measured_rows() {
  awk '/^# measured/ { on = 1; next } on && /^#  +[0-9]+ / { print $2, $3, $4, $5 " %" } on && /busbw error/ { exit }' |
    sed 's/ -\([0-9]\)/ \xe2\x88\x92\1/'
}

# architect_table DIR: the architect's sweep (scenarios/architect-compare.yaml over
# routing.load_balancing x topology.oversubscription x three jobs lists, in that order) as one
# row per fabric: its cost proxy, the AllReduce and AllToAll busbw on all 32 GPUs, and both jobs'
# busbw beside each other with their slowdown and overlap (DIR/point-NNN/results.json).
architect_table() {
  echo "| routing | ratio | cost (USD) | AllReduce 32 (GB/s) | AllToAll 32 (GB/s) | both: AllReduce 16 (GB/s, slowdown, overlap) | both: AllToAll 16 (GB/s, slowdown, overlap) |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  awk -F, 'NR > 1 && ($1 - 1) % 3 == 0 { print $1, $2, $3 }' "$1/sweep.csv" |
    while read -r point lb ratio; do
      p() { printf '%s/point-%03d/results.json' "$1" "$2"; }
      a="$(p "$1" "$point")" b="$(p "$1" $((point + 1)))" c="$(p "$1" $((point + 2)))"
      printf '| %s | %s:1 | %s | %.2f | %.2f | %.2f (%.2fx, %.0f %%) | %.2f (%.2fx, %.0f %%) |\n' "$lb" "$ratio" \
        "$(thousands "$(printf %.0f "$(json "$a" fabric.cost_usd)")")" \
        "$(json "$a" 'jobs[0].collective.busbw_GBps')" "$(json "$b" 'jobs[0].collective.busbw_GBps')" \
        "$(json "$c" 'jobs[0].collective.busbw_GBps')" "$(json "$c" 'jobs[0].slowdown')" \
        "$(awk -v o="$(json "$c" 'jobs[0].overlap')" 'BEGIN { print 100 * o }')" \
        "$(json "$c" 'jobs[1].collective.busbw_GBps')" "$(json "$c" 'jobs[1].slowdown')" \
        "$(awk -v o="$(json "$c" 'jobs[1].overlap')" 'BEGIN { print 100 * o }')"
    done
}
