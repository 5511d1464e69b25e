"""ab_power_summary.py — the table ci/ab-power.sh prints: per kind of pair (A/A, about 10%
slower, about 3% slower), the verdicts of the interleaved gate (ab.json) and of the two-job gate
on the same machine and load, the realised slowdown (median over the ab rounds of
baseline/current - 1), and for the 3% kind whether an `ok` interval excluded -3%."""
import collections
import json
import statistics
import sys

work = sys.argv[1]
two_job = collections.defaultdict(list)
for line in open(f"{work}/two_job.txt"):
    kind, _, verdict = (line.split() + [""])[:3]
    two_job[kind].append(verdict or "none")
for kind in ("aa", "ab10", "ab3"):
    ab_verdicts, realised, ok_excluding = [], [], 0
    for k in range(1, len(two_job[kind]) + 1):
        try:
            with open(f"{work}/{kind}-{k}-ab/ab.json") as f:
                ab = json.load(f)
        except OSError:
            ab_verdicts.append("none")
            continue
        point = ab["points"][0]
        ab_verdicts.append(point["verdict"])
        for r in ab["rounds"]:
            (b,), (c,) = r["baseline"]["seconds_per_step"].values(), r["current"]["seconds_per_step"].values()
            realised.append(c / b - 1)
        # shift is the paired log ratio baseline/current: -3% slower lies below its lower end.
        if point["verdict"] == "ok" and point["shift_interval"][0] > -0.03:
            ok_excluding += 1
    line = (f"{kind}: {len(ab_verdicts)} pairs: ab {dict(collections.Counter(ab_verdicts))}; "
            f"two-job gate {dict(collections.Counter(two_job[kind]))}")
    if kind != "aa" and realised:
        line += f"; realised slowdown {100 * statistics.median(realised):+.1f}% (median over rounds)"
    if kind == "ab3":
        line += f"; ab ok with an interval excluding -3%: {ok_excluding}"
    print(line)
