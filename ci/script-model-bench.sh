#!/usr/bin/env bash
# script-model-bench.sh — what training a user's TorchScript file costs against ddpbench's own
# model: torchvision's resnet18, scripted by reference/script_model.py with the Python that
# matches the linked libtorch, trained single-device on cifar_resnet18's data beside the built-in
# cifar_resnet18 (the same layout), same batch, same steps, in one call, alternating A B A B so
# that drift on a noisy machine hits both. Prints each p50 step time and the ratio (issue 33's
# target: <= 1.05).
#
#   ci/script-model-bench.sh [BUILD_DIR] [PYTHON] [BATCH] [STEPS] [ROUNDS]
#
# BUILD_DIR defaults to build, PYTHON to /usr/bin/python3 (the 1.13 oracle for the Debian build),
# BATCH to 32, STEPS (timed, after 3 warm-up steps) to 20, ROUNDS to 2.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build}"
python="${2:-/usr/bin/python3}"
batch="${3:-32}"
steps="${4:-20}"
rounds="${5:-2}"
ddpbench="$build/harness/ddpbench"
[[ -x "$ddpbench" ]] || { echo "script-model-bench.sh: no $ddpbench; build first (ci/build.sh)" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/script-model-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$python" "$here/reference/script_model.py" torchvision.models:resnet18 "$work/resnet18.pt" \
  --kwargs num_classes=10 > /dev/null

# p50 step time (s) of one single-device perf run; extra arguments select the model.
p50() {
  local out="$work/run$RANDOM"
  "$ddpbench" run --scenario cifar_resnet18 --modes single --perf-only --batch-size "$batch" \
    --steps "$steps" --warmup 3 --quiet --out "$out" "$@" > /dev/null
  "$python" -c 'import json,sys; r=json.load(open(sys.argv[1]))
print(r["results"][0]["throughput"]["step_time_p50_s"])' "$out/report.json"
  rm -rf "$out"
}

builtin=() scripted=()
for ((i = 0; i < rounds; i++)); do
  builtin+=("$(p50)")
  scripted+=("$(p50 --model "$work/resnet18.pt")")
done
"$python" - "${builtin[*]}" "${scripted[*]}" "$batch" <<'EOF'
import statistics, sys
b = [float(x) for x in sys.argv[1].split()]
s = [float(x) for x in sys.argv[2].split()]
mb, ms = statistics.median(b), statistics.median(s)
print(f"cifar_resnet18, single device, batch {sys.argv[3]}, p50 step (median of {len(b)} runs):")
print(f"  built-in model        {mb * 1e3:8.2f} ms   runs: {', '.join(f'{x*1e3:.2f}' for x in b)}")
print(f"  scripted resnet18.pt  {ms * 1e3:8.2f} ms   runs: {', '.join(f'{x*1e3:.2f}' for x in s)}")
print(f"  ratio scripted / built-in: {ms / mb:.3f} (target <= 1.05)")
EOF
