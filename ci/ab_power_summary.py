"""ab_power_summary.py — the table ci/ab-power.sh prints: per kind of pair (A/A, about 10%
slower, about 3% slower), the verdicts of the interleaved gate (ab.json) and of the two-job gate
on the same machine and load, the realised slowdown twice (the median over the ab rounds of
current/baseline - 1, and the two-job runs' median step, current over baseline - 1: the first is
what the gate under judgement saw, the second a measure of its own), and for the 3% kind whether
an `ok` interval excluded -3%."""
import collections
import json
import statistics
import sys

work = sys.argv[1]
two_job = collections.defaultdict(list)
for line in open(f"{work}/two_job.txt"):
    kind, _, verdict = (line.split() + [""])[:3]
    two_job[kind].append(verdict or "none")


def median_step(folder):
    """The run's median step (the median of its repeat medians), or None where it is missing."""
    try:
        with open(f"{folder}/report.json") as f:
            results = json.load(f)["results"]
        return results[0]["throughput"]["spread"]["median_step_s"]
    except (OSError, KeyError, IndexError, ValueError):
        return None


for kind in ("aa", "ab10", "ab3"):
    ab_verdicts, realised, ok_excluding, two_job_realised = [], [], 0, []
    for k in range(1, len(two_job[kind]) + 1):
        base, cur = median_step(f"{work}/{kind}-{k}-base"), median_step(f"{work}/{kind}-{k}-cur")
        if base and cur:
            two_job_realised.append(cur / base - 1)
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
        line += f"; realised slowdown {100 * statistics.median(realised):+.1f}% (median over ab rounds)"
    if kind != "aa" and two_job_realised:
        line += f", {100 * statistics.median(two_job_realised):+.1f}% (median over two-job pairs)"
    if kind == "ab3":
        line += f"; ab ok with an interval excluding -3%: {ok_excluding}"
    print(line)
