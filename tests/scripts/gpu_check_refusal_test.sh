#!/usr/bin/env bash
# gpu_check_refusal_test.sh — ci/gpu-check.sh on a node whose torch sees no CUDA device: one line
# naming the problem and the fix, exit 2, and no output folder. Skips (77) where a GPU is visible,
# since there the check would really build and run.
#   gpu_check_refusal_test.sh PYTHON   (an interpreter that imports torch)
set -u
python=${1:?usage: gpu_check_refusal_test.sh PYTHON}
here="$(cd "$(dirname "$0")" && pwd)"
if "$python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "a CUDA device is visible: ci/gpu-check.sh would run for real"; exit 77
fi
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
PYTHON="$python" bash "$here/../../ci/gpu-check.sh" "$scratch/out" >"$scratch/stdout" 2>"$scratch/stderr"
rc=$?
fail() { echo "FAIL: $*"; echo "stderr:"; cat "$scratch/stderr"; exit 1; }
[ $rc -eq 2 ] || fail "exit $rc, want 2"
[ "$(wc -l <"$scratch/stderr")" -eq 1 ] || fail "want exactly one error line"
grep -q "sees no CUDA device; run this on a GPU node" "$scratch/stderr" || fail "the line does not name the problem"
[ ! -e "$scratch/out" ] || fail "the output folder was created"
[ ! -s "$scratch/stdout" ] || fail "something was printed on stdout"
PYTHON="$scratch/no-such-python" bash "$here/../../ci/gpu-check.sh" "$scratch/out" 2>"$scratch/stderr"
[ $? -eq 2 ] && grep -q "cannot import torch" "$scratch/stderr" || fail "a python without torch is not refused"
echo "PASS"
