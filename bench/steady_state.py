#!/usr/bin/env python3
"""How much of a packet-level run repeats itself: the opportunity a steady-state fast-forward
has (issue 28; Wormhole, Long et al. NSDI 2026, skips steady states and reuses repeated ones).

Reads a run's flows.csv (or flows.csv.gz) and, per queue pair (a connection; its messages are
the collective's chunks), looks at the intervals between successive message completions:

  exact:  the longest run of intervals that repeat to the picosecond with a period of p
          messages (interval[i] == interval[i - p], p = 1 .. --max-period; flows.csv prints
          microseconds to 6 decimals, i.e. whole picoseconds). A deterministic network whose
          state repeats completes messages in exactly repeating intervals; the converse need
          not hold, so this is an upper bound on what an exact fast-forward could skip.
  rate:   Wormhole-style rate steadiness: a window of --window completions is steady when its
          throughput is within --eps of the window before it.

For each it prints the per-QP share of its active time inside such stretches and the share of
the run's busy time during which every active QP is inside one (a fast-forward of the whole
network needs all of them at once). Run by hand on a Release build's output:

  fabricsim run SCENARIO --out out/x ... && bench/steady_state.py out/x/flows.csv

flows.csv keeps the first 1,000,000 delivered messages: when results.json beside it says more
were delivered, the analysis covers only the recorded start of the run, and QPs that began
shortly before the cut count as unsteady (it says so).
"""
import argparse
import collections
import csv
import gzip
import json
import os
import statistics
import sys


def read_flows(path):
    opener = gzip.open if path.endswith(".gz") else open
    by_qp = collections.defaultdict(list)
    with opener(path, "rt") as f:
        for r in csv.DictReader(f):
            by_qp[r["qp"]].append(
                (round(float(r["start_us"]) * 1e6), round(float(r["end_us"]) * 1e6), int(r["bytes"])))
    for v in by_qp.values():
        v.sort(key=lambda m: m[1])
    return by_qp


def longest_repeat(ends, max_period):
    """(run start time, run end time, period) of the longest exactly repeating run, or None."""
    d = [ends[i + 1] - ends[i] for i in range(len(ends) - 1)]
    best = None
    for p in range(1, max_period + 1):
        run = 0
        for i in range(p, len(d)):
            run = run + 1 if d[i] == d[i - p] else 0
            # A run of `run` matches covers intervals i - p - run + 1 .. i, which are the
            # completions from that index to i + 1. At least three periods to count.
            if run >= 3 * p and (best is None or run + p > best[0]):
                first = i - p - run + 1
                best = (run + p, ends[first], ends[i + 1], p)
    return None if best is None else best[1:]


def rate_steady(msgs, window, eps):
    """Time intervals [a, b) in which the QP's windowed throughput is steady."""
    ends = [m[1] for m in msgs]
    size = [m[2] for m in msgs]
    out = []
    for i in range(window, len(msgs) - window):
        before = sum(size[i - window + 1:i + 1]) / max(1, ends[i] - ends[i - window])
        after = sum(size[i + 1:i + window + 1]) / max(1, ends[i + window] - ends[i])
        if abs(after / before - 1) < eps:
            out.append((ends[i - window], ends[i + window]))
    merged = []
    for a, b in out:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def coverage(spans):
    """spans: per QP (active_from, active_to, [steady intervals]). Returns (per-QP shares,
    time every active QP was steady, busy time)."""
    events, shares = [], []
    for lo, hi, steady in spans:
        inside = sum(b - a for a, b in steady)
        shares.append(inside / max(1, hi - lo))
        events += [(lo, 1, 0), (hi, -1, 0)]
        t = lo
        for a, b in steady:  # the QP's unsteady gaps
            if a > t:
                events += [(t, 0, 1), (a, 0, -1)]
            t = max(t, b)
        if hi > t:
            events += [(t, 0, 1), (hi, 0, -1)]
    events.sort()
    active = unsteady = 0
    prev = busy = all_steady = 0
    for t, da, du in events:
        if active > 0:
            busy += t - prev
            if unsteady == 0:
                all_steady += t - prev
        active += da
        unsteady += du
        prev = t
    return sorted(shares), all_steady, busy


def quantiles(xs):
    return "p10 %.2f  p50 %.2f  p90 %.2f" % (xs[len(xs) // 10], xs[len(xs) // 2], xs[9 * len(xs) // 10])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("flows", help="flows.csv or flows.csv.gz of a packet-level run")
    ap.add_argument("--max-period", type=int, default=8, help="longest period looked for, messages")
    ap.add_argument("--window", type=int, default=12, help="completions per rate window")
    ap.add_argument("--eps", type=float, default=0.01, help="rate windows this close are steady")
    ap.add_argument("--min-messages", type=int, default=30, help="QPs with fewer are left out")
    a = ap.parse_args()
    if not os.path.exists(a.flows):
        sys.exit(f"steady_state.py: no file {a.flows}")
    by_qp = read_flows(a.flows)
    kept = {q: v for q, v in by_qp.items() if len(v) >= a.min_messages}
    last = max(m[1] for v in by_qp.values() for m in v)
    print(f"{a.flows}: {sum(map(len, by_qp.values()))} messages on {len(by_qp)} QPs, "
          f"{len(kept)} with at least {a.min_messages}; last completion {last / 1e6:.3f} us")
    results = os.path.join(os.path.dirname(a.flows), "results.json")
    if os.path.exists(results):
        flows = json.load(open(results)).get("flows") or {}
        if flows.get("recorded", 0) < flows.get("count", 0):
            print(f"  flows.csv holds the first {flows['recorded']} of {flows['count']} messages: "
                  f"only the run up to {last / 1e6:.3f} us is analysed")
    if not kept:
        sys.exit("steady_state.py: no QP has enough messages (lower --min-messages)")
    exact, periods, rate = [], collections.Counter(), []
    for v in kept.values():
        lo, hi = v[0][0], v[-1][1]
        run = longest_repeat([m[1] for m in v], a.max_period)
        if run is not None:
            periods[run[2]] += 1
        exact.append((lo, hi, [] if run is None else [run[:2]]))
        rate.append((lo, hi, rate_steady(v, a.window, a.eps)))
    shares, all_steady, busy = coverage(exact)
    print(f"exact repetition (period <= {a.max_period} messages, >= 3 periods): "
          f"{sum(periods.values())} of {len(kept)} QPs, periods {dict(sorted(periods.items()))}")
    print(f"  share of a QP's active time in its run: {quantiles(shares)}")
    print(f"  every active QP inside its run: {all_steady / 1e6:.1f} of {busy / 1e6:.1f} us "
          f"({all_steady / max(1, busy):.1%})")
    if periods:
        runs = [s[0] for s in (r[2] for r in exact) if s]
        print(f"  runs start at a median {statistics.median(x[0] for x in runs) / 1e6:.1f} us, "
              f"end at {statistics.median(x[1] for x in runs) / 1e6:.1f} us")
    shares, all_steady, busy = coverage(rate)
    print(f"rate steadiness (window {a.window}, within {a.eps:.1%}): per QP {quantiles(shares)}; "
          f"every active QP steady {all_steady / 1e6:.1f} of {busy / 1e6:.1f} us "
          f"({all_steady / max(1, busy):.1%})")


if __name__ == "__main__":
    main()
