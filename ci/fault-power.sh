#!/usr/bin/env bash
# fault-power.sh — the power of the gradient check: for each built-in scenario and world size, the
# smallest gradient fault (--inject-fault grad:rank=1,step=1,eps=E on the first parameter) among
# a ladder of sizes that a float32 run FAILs on its gradients check. Run it against two builds
# (before and after a change to the tolerance model) to show the power was kept (issue 50:
# reports/METRICS.md, "Rounding floor"). Each ladder starts just above the smallest eps the run
# accepts (world size x the scenario's gradient tolerance; below it the fault is refused).
#
#   ci/fault-power.sh [DDPBENCH] [SCENARIOS] [WORLDS]
#
# DDPBENCH defaults to build/harness/ddpbench, SCENARIOS to "toy_cnn tiny_resnet cifar_resnet18",
# WORLDS to "2 3". Prints one line per scenario and world: the eps ladder, FAIL/pass for each, and
# the smallest eps that failed.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
ddpbench="${1:-$here/build/harness/ddpbench}"
scenarios="${2:-toy_cnn tiny_resnet cifar_resnet18}"
worlds="${3:-2 3}"
[[ -x "$ddpbench" ]] || { echo "fault-power.sh: no $ddpbench; build first (ci/build.sh)" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/fault-power.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The gradient tolerance in float32 is 2e-5 for these scenarios; the ladder is in multiples of
# the smallest accepted eps, W x 2e-5, from 1.25 x it up.
for scenario in $scenarios; do
  for w in $worlds; do
    line="$scenario world $w:"
    smallest="none"
    for m in 64 16 8 4 2 1.5 1.25; do
      eps=$(awk -v m="$m" -v w="$w" 'BEGIN { printf "%.3g", m * w * 2e-5 }')
      rc=0
      "$ddpbench" run --scenario "$scenario" --gpus "$w" --modes single,ddp --steps 2 \
        --batch-size $((4 * w)) --check-only --eval-size 0 --quiet \
        --inject-fault "grad:rank=1,step=1,eps=$eps" --out "$work/out" > "$work/log" 2>&1 || rc=$?
      if [[ $rc -eq 1 ]] && grep -q "gradients .*FAIL" "$work/log"; then
        line="$line $eps FAIL"
        smallest="$eps"
      else
        line="$line $eps pass(rc=$rc)"
      fi
    done
    echo "$line -> smallest failing eps $smallest"
  done
done
