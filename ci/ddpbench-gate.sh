#!/usr/bin/env bash
# ddpbench-gate.sh — the plain-shell CI recipe: build ddpbench, run the gated scenarios, compare
# each with its committed baseline, and leave every report under $OUT for the CI to upload.
#   ci/ddpbench-gate.sh                 # gate against ci/baselines/<scenario>.json
#   UPDATE_BASELINES=1 ci/ddpbench-gate.sh   # refresh the baselines (commit them afterwards)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-ddpbench-ci}
GPUS=${GPUS:-2}
SCENARIOS=${SCENARIOS:-"toy_cnn"}
ci/build.sh
status=0
for s in $SCENARIOS; do
  # exit 1 = a correctness check failed; the gate below reports it too, so keep going.
  build/harness/ddpbench run --scenario "$s" --gpus "$GPUS" --out "$OUT/$s" || [ $? -eq 1 ]
  if [ "${UPDATE_BASELINES:-0}" = 1 ]; then
    mkdir -p ci/baselines && cp "$OUT/$s/report.json" "ci/baselines/$s.json"
  elif [ -f "ci/baselines/$s.json" ]; then
    build/harness/ddpbench gate --baseline "ci/baselines/$s.json" --current "$OUT/$s/report.json" \
      --thresholds ci/gate.yaml --format md | tee -a "$OUT/gate.md" || status=1
  else
    echo "no baseline for $s: run UPDATE_BASELINES=1 $0 and commit ci/baselines/" >&2
    status=1
  fi
done
exit $status
