#!/usr/bin/env bash
# ab-power.sh — what the interleaved gate (`ddpbench ab`) and the two-job gate (`run --repeats`
# twice, then `gate`) each call on the same machine, with a CPU-hungry loop beside the runs whose
# duty cycle changes between the two-job gate's baseline and current jobs, as a shared runner's
# neighbours do (issue 74; figures in reports/METRICS.md, "The gate in one job").
#
#   ci/ab-power.sh [DDPBENCH] [PAIRS] [ROUNDS] [MS10] [MS3] [LOAD] [ROUNDS_KIND]
#
# Per pair and kind (A/A, a slowdown of about 10% and of about 3%, made by a wrapper "build" that
# adds --inject-fault slowall:ms=M to every run: every rank M ms slower, as a slower build is): one
# `ab --rounds ROUNDS` and one two-job gate of ROUNDS repeats a side. ROUNDS_KIND is duet
# (default: `ab --duet`, both builds of a round at once) or b2b (back to back). LOAD is duty
# (default: a loop on one core, busy 10%, 40% or 80% of each 100 ms, drawn again for every job
# and every ab) or idle. Defaults: build/harness/ddpbench, 5 pairs, 10 rounds, 0.6 and 0.18 ms
# (toy_cnn's step is 5-7 ms here), AB_POWER_STEPS=50 timed steps a run. The slowdowns are
# measured, not assumed: each kind's realised slowdown is printed beside its verdicts, as the
# ab rounds saw it and as the two-job runs saw it (slow:rank=0, the first version's fault,
# realised half of what it claimed: a busy wait on one rank hides behind the other rank's wait).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
ddpbench="${1:-$here/build/harness/ddpbench}"
pairs="${2:-5}"
rounds="${3:-10}"
ms10="${4:-0.6}"
ms3="${5:-0.18}"
load="${6:-duty}"
rounds_kind="${7:-duet}"
[[ -x "$ddpbench" ]] || { echo "ab-power.sh: no $ddpbench; build first (ci/build.sh)" >&2; exit 2; }
case "$load" in duty|idle) ;; *) echo "ab-power.sh: LOAD '$load' is not duty or idle" >&2; exit 2 ;; esac
case "$rounds_kind" in
  duet) duet=(--duet) ;;
  b2b) duet=() ;;
  *) echo "ab-power.sh: ROUNDS_KIND '$rounds_kind' is not duet or b2b" >&2; exit 2 ;;
esac
work="${AB_POWER_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/ab-power.XXXXXX")}"
mkdir -p "$work"
echo "ab-power: runs in $work"
# AB_POWER_STEPS: the timed steps of every run (default 50). A duet's two runs start together but
# not to the millisecond; the longer the timed phase, the less of it one side runs alone.
args=(--scenario toy_cnn --modes ddp --gpus 2 --perf-only --steps "${AB_POWER_STEPS:-50}")

# A "build" that is this one made slower by M ms of a busy wait in every rank's every timed step.
wrapper() {  # name ms
  printf '#!/bin/sh\nexec "%s" "$@" --inject-fault slowall:ms=%s\n' "$ddpbench" "$2" > "$work/$1"
  chmod +x "$work/$1"
}
wrapper slow10 "$ms10"
wrapper slow3 "$ms3"

loop_pid=""
start_load() {  # a new duty cycle for the next job
  stop_load
  [[ "$load" == idle ]] && return 0
  local duty=$(( (RANDOM % 3 == 0) ? 10 : ((RANDOM % 2) ? 40 : 80) ))
  echo "$duty" >> "$work/duties.txt"
  python3 -c "
import time
busy = $duty / 1000.0
while True:
    t = time.monotonic()
    while time.monotonic() - t < busy: pass
    time.sleep(0.1 - busy)" &
  loop_pid=$!
}
stop_load() {  # under set -e a failing last command of an && list would end the script
  if [[ -n "$loop_pid" ]]; then
    kill "$loop_pid" 2>/dev/null || true
    wait "$loop_pid" 2>/dev/null || true
  fi
  loop_pid=""
}
trap stop_load EXIT

verdict_of_gate() {  # baseline current -> the two-job gate's verdict word
  "$ddpbench" gate --baseline "$1/report.json" --current "$2/report.json" --max-slowdown 0.05 |
    awk 'NR == 2 { print $5 }' | tr -d ':'
}

for ((k = 1; k <= pairs; k++)); do
  for kind in aa ab10 ab3; do
    case "$kind" in aa) current="$ddpbench" ;; ab10) current="$work/slow10" ;; ab3) current="$work/slow3" ;; esac
    start_load
    "$ddpbench" ab --baseline-bin "$ddpbench" --current-bin "$current" --rounds "$rounds" \
      "${duet[@]}" --seed "$k" --allow-undecided --out "$work/$kind-$k-ab" -- "${args[@]}" > /dev/null 2>&1 || true
    start_load
    "$ddpbench" run "${args[@]}" --repeats "$rounds" --quiet --out "$work/$kind-$k-base" > /dev/null
    start_load
    "$current" run "${args[@]}" --repeats "$rounds" --quiet --out "$work/$kind-$k-cur" > /dev/null
    stop_load
    echo "$kind $k $(verdict_of_gate "$work/$kind-$k-base" "$work/$kind-$k-cur")" >> "$work/two_job.txt"
  done
done
python3 "$here/ci/ab_power_summary.py" "$work"
