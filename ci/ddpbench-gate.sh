#!/usr/bin/env bash
# ddpbench-gate.sh — the plain-shell CI recipe: build ddpbench, run the gated scenarios with
# repeats (the gate decides with their spread: README, "A gate that knows noise"), compare each
# with its committed baseline or with the history of earlier commits, and leave every report
# under $OUT for the CI to upload.
#   ci/ddpbench-gate.sh                        # gate against ci/baselines/<scenario>.json
#   UPDATE_BASELINES=1 ci/ddpbench-gate.sh     # refresh the baselines (commit them afterwards)
#   HISTORY=ci/history ci/ddpbench-gate.sh     # gate against ci/history/<scenario>/ (the
#                                              # report.json of earlier commits, named so that
#                                              # they sort oldest first) and draw its trend
#   HISTORY=ci/history KEEP=1 ...              # then add this run to the history as
#                                              # <UTC time>-<commit>.json
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-ddpbench-ci}
GPUS=${GPUS:-2}
SCENARIOS=${SCENARIOS:-"toy_cnn"}
REPEATS=${REPEATS:-10}
ci/build.sh
status=0
for s in $SCENARIOS; do
  # exit 1 = a correctness check failed; the gate below reports it too, so keep going.
  build/harness/ddpbench run --scenario "$s" --gpus "$GPUS" --repeats "$REPEATS" \
    --out "$OUT/$s" || [ $? -eq 1 ]
  if [ "${UPDATE_BASELINES:-0}" = 1 ]; then
    mkdir -p ci/baselines && cp "$OUT/$s/report.json" "ci/baselines/$s.json"
  elif [ -n "${HISTORY:-}" ]; then
    if compgen -G "$HISTORY/$s/*.json" > /dev/null; then
      build/harness/ddpbench gate --history "$HISTORY/$s" --current "$OUT/$s/report.json" \
        --thresholds ci/gate.yaml --format md | tee -a "$OUT/gate.md" || status=1
      build/harness/ddpbench history "$HISTORY/$s" --out "$OUT/$s/history" > /dev/null || true
    else
      echo "no history of $s yet: this run starts it (KEEP=1)" | tee -a "$OUT/gate.md"
    fi
  elif [ -f "ci/baselines/$s.json" ]; then
    build/harness/ddpbench gate --baseline "ci/baselines/$s.json" --current "$OUT/$s/report.json" \
      --thresholds ci/gate.yaml --format md | tee -a "$OUT/gate.md" || status=1
  else
    echo "no baseline for $s: run UPDATE_BASELINES=1 $0 and commit ci/baselines/" >&2
    status=1
  fi
  if [ -n "${HISTORY:-}" ] && [ "${KEEP:-0}" = 1 ]; then
    mkdir -p "$HISTORY/$s"
    cp "$OUT/$s/report.json" \
      "$HISTORY/$s/$(date -u +%Y%m%dT%H%M%S)-$(git rev-parse --short HEAD 2>/dev/null || echo local).json"
  fi
done
exit $status
