#!/usr/bin/env bash
# gate-power.sh — the gate's false-alarm rate and power on this machine (issue 54; figures in
# reports/METRICS.md, "The gate on a noisy machine"). Runs toy_cnn, ddp, 2 ranks, --perf-only
# with --repeats R: 2P runs of the same binary and command (A), P with a slowdown of about 10%
# (--inject-fault slow:rank=0,ms=M10) and P of about 3% (ms=M3), interleaved so that drift in
# the machine's load falls on all three alike. Then it gates P A/A pairs (a1 vs a2, a3 vs a4,
# ...), P A/B10 pairs (a_odd vs b10) and P A/B3 pairs (a_even vs b3) with the real `ddpbench
# gate`, and prints each pair's verdict beside what the single-sample rule (today's gate before
# repeats: the ratio of repeat 1's medians against --max-slowdown) says on the same runs.
#
#   ci/gate-power.sh [DDPBENCH] [PAIRS] [REPEATS] [MS10] [MS3] [EXTRA RUN FLAGS...]
#
# Defaults: build/harness/ddpbench, 20 pairs, 10 repeats, 0.31 and 0.087 ms (10% and 3% of the
# 2.8 ms step this machine measures pinned; the realized slowdowns are printed). About 15 s a run.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
ddpbench="${1:-$here/build/harness/ddpbench}"
pairs="${2:-20}"
repeats="${3:-10}"
ms10="${4:-0.31}"
ms3="${5:-0.087}"
shift $(( $# < 5 ? $# : 5 ))
extra=("$@")
[[ -x "$ddpbench" ]] || { echo "gate-power.sh: no $ddpbench; build first (ci/build.sh)" >&2; exit 2; }
work="${GATE_POWER_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gate-power.XXXXXX")}"
mkdir -p "$work"
echo "gate-power: runs in $work"

run() {  # name [fault]
  local out="$work/$1"
  [[ -f "$out/report.json" ]] && return 0  # resumable
  local fault=()
  [[ -n "${2:-}" ]] && fault=(--inject-fault "$2")
  "$ddpbench" run --scenario toy_cnn --modes ddp --gpus 2 --perf-only --steps 100 \
    --repeats "$repeats" --quiet --out "$out" "${fault[@]}" "${extra[@]}" > /dev/null
}

for ((k = 1; k <= pairs; k++)); do
  run "a$((2 * k - 1))"
  run "b10_$k" "slow:rank=0,ms=$ms10"
  run "a$((2 * k))"
  run "b3_$k" "slow:rank=0,ms=$ms3"
done

verdict() {  # baseline current -> the gate's verdict word
  "$ddpbench" gate --baseline "$work/$1/report.json" --current "$work/$2/report.json" \
    --max-slowdown 0.05 | awk 'NR == 2 { print $5 }' | tr -d ':'
}

for ((k = 1; k <= pairs; k++)); do
  echo "aa $k $(verdict "a$((2 * k - 1))" "a$((2 * k))") a$((2 * k - 1)) a$((2 * k))"
  echo "ab10 $k $(verdict "a$((2 * k - 1))" "b10_$k") a$((2 * k - 1)) b10_$k"
  echo "ab3 $k $(verdict "a$((2 * k))" "b3_$k") a$((2 * k)) b3_$k"
done > "$work/verdicts.txt"
python3 "$here/ci/gate_power_summary.py" "$work"
