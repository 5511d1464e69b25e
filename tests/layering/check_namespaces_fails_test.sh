#!/usr/bin/env bash
# check_namespaces_fails_test.sh — check_namespaces.py can say FAIL: in a scratch repository, a
# file of harness/requests/ whose code is in ddpbench::run must be named, with exit 1; a forward
# declaration of another namespace before its own code is not an error; the mended tree passes.
set -euo pipefail
CHECK=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ddpbench-namespaces.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
git -C "$WORK" init -q
mkdir -p "$WORK/harness/requests" "$WORK/harness/commands"
printf 'namespace ddpbench::run {\nstruct RunRequest {};\n}\n' >"$WORK/harness/requests/run_request.h"
printf 'namespace ddpbench::launch {\nclass RankZygote;\n}\nnamespace ddpbench::commands {\nint f();\n}\n' \
  >"$WORK/harness/commands/execute.h"
git -C "$WORK" add harness
if python3 "$CHECK" "$WORK" >"$WORK/out.txt"; then
  echo "FAIL: check_namespaces.py passed requests/ code in ddpbench::run"; cat "$WORK/out.txt"; exit 1
fi
grep -q "harness/requests/run_request.h: its code is in ddpbench::run, not ddpbench::requests" \
  "$WORK/out.txt" || { echo "FAIL: the file was not named"; cat "$WORK/out.txt"; exit 1; }
if grep -q "commands/execute.h" "$WORK/out.txt"; then
  echo "FAIL: a forward declaration was taken for the file's code"; cat "$WORK/out.txt"; exit 1
fi
printf 'namespace ddpbench::requests {\nstruct RunRequest {};\n}\n' >"$WORK/harness/requests/run_request.h"
python3 "$CHECK" "$WORK" >"$WORK/out.txt" || { echo "FAIL: a mended tree failed"; cat "$WORK/out.txt"; exit 1; }
echo "ok: check_namespaces.py names code outside its folder's namespace and passes the mended tree"
