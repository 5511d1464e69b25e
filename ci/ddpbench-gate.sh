#!/usr/bin/env bash
# ddpbench-gate.sh — the plain-shell CI recipe: build ddpbench, run the gated scenarios with
# repeats (the gate decides with their spread: docs/gate.md), compare each
# with its committed baseline or with the history of earlier commits, and leave every report
# under $OUT for the CI to upload.
#   ci/ddpbench-gate.sh                        # gate against ci/baselines/<scenario>.json
#   UPDATE_BASELINES=1 ci/ddpbench-gate.sh     # refresh the baselines (commit them afterwards)
#   HISTORY=ci/history ci/ddpbench-gate.sh     # gate against ci/history/<scenario>/ (the
#                                              # report.json of earlier commits, named so that
#                                              # they sort oldest first) and draw its trend
#   HISTORY=ci/history KEEP=1 ...              # then add this run to the history as
#                                              # <UTC time>-<commit>.json
#   BASE_REF=origin/main ci/ddpbench-gate.sh   # A/B in this job (docs/gate.md, "A/B in one job"): build
#                                              # BASE_REF in $BASE_DIR (default .ddpbench-base; a
#                                              # cached build there is reused), check this build,
#                                              # and gate its throughput against BASE_REF's on
#                                              # ROUNDS (10) paired rounds with `ddpbench ab`
#   UNDECIDED=fail BASE_REF=... (default pass)  # whether ab's `undecided` fails the job: by
#                                              # default it passes, listed in gate.md, because
#                                              # on a runner as noisy as this project's VM 98%
#                                              # of A/A gates of 10 rounds are undecided, and a
#                                              # gate that fails nearly every unchanged pull
#                                              # request is switched off (README, "The default
#                                              # a CI job sees")
#   CALIBRATION=calibration.json BASE_REF=...  # print what this runner's A/A rounds
#                                              # (ab --calibrate) say the gate can see
#   ROUNDS_KIND=b2b BASE_REF=... (default duet) # duet: each round runs both builds at once
#                                              # (ab --duet), which on this project's VM decided
#                                              # what back-to-back rounds left undecided
#                                              # (docs/gate.md, "Duet rounds"); b2b: back to back
#   AB_STEPS=200 BASE_REF=... (default 200)     # timed steps of every ab run: a duet's runs
#                                              # start together but not to the millisecond, so
#                                              # a short timed phase is partly run alone
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-ddpbench-ci}
GPUS=${GPUS:-2}
SCENARIOS=${SCENARIOS:-"toy_cnn"}
REPEATS=${REPEATS:-10}
ROUNDS=${ROUNDS:-10}
UNDECIDED=${UNDECIDED:-pass}
case "$UNDECIDED" in
  pass) undecided=(--allow-undecided) ;;
  fail) undecided=() ;;
  *) echo "ddpbench-gate.sh: UNDECIDED='$UNDECIDED' is not pass or fail" >&2; exit 2 ;;
esac
case "${ROUNDS_KIND:-duet}" in
  duet) rounds_kind=(--duet) ;;
  b2b) rounds_kind=() ;;
  *) echo "ddpbench-gate.sh: ROUNDS_KIND='$ROUNDS_KIND' is not duet or b2b" >&2; exit 2 ;;
esac
calibration=()
if [ -n "${CALIBRATION:-}" ]; then
  [ -f "$CALIBRATION" ] || { echo "ddpbench-gate.sh: CALIBRATION '$CALIBRATION' is not a file; make it with ddpbench ab --calibrate" >&2; exit 2; }
  calibration=(--calibration "$CALIBRATION")
fi
ci/build.sh
base_bin=""
if [ -n "${BASE_REF:-}" ]; then
  base_dir=${BASE_DIR:-.ddpbench-base}
  if [ ! -x "$base_dir/build/harness/ddpbench" ]; then
    rm -rf "$base_dir"
    git worktree prune
    git worktree add --detach "$base_dir" "$BASE_REF"
    "$base_dir/ci/build.sh" --target ddpbench
  fi
  base_bin="$base_dir/build/harness/ddpbench"
fi
status=0
for s in $SCENARIOS; do
  if [ -n "$base_bin" ]; then
    # The checks once, on this build; the throughput on both builds, interleaved in this job.
    build/harness/ddpbench run --scenario "$s" --gpus "$GPUS" --check-only --out "$OUT/$s" ||
      status=1
    build/harness/ddpbench ab --baseline-bin "$base_bin" --rounds "$ROUNDS" --format md \
      "${rounds_kind[@]}" "${undecided[@]}" "${calibration[@]}" \
      --out "$OUT/$s-ab" -- --scenario "$s" --gpus "$GPUS" --perf-only --steps "${AB_STEPS:-200}" |
      tee -a "$OUT/gate.md" || status=1
    continue
  fi
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
