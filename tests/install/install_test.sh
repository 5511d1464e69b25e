#!/usr/bin/env bash
# install_test.sh — `cmake --install` of a build into a temporary prefix (cmake/ddpbench_install.cmake),
# then the installed ddpbench run as a user would run it from their PATH: outside the source and
# build trees, with a bare environment. It must say its version, list the scenarios, and run a
# short checked training that passes; the oracles and docs must be under share/.
# Usage: install_test.sh BUILD_DIR CMAKE
set -euo pipefail
BUILD=$1
CMAKE=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ddpbench-install.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$CMAKE" --install "$BUILD" --prefix "$WORK/prefix" >"$WORK/install.log" 2>&1 ||
  fail "cmake --install: $(tail -3 "$WORK/install.log")"
[ -x "$WORK/prefix/bin/ddpbench" ] || fail "no bin/ddpbench in the prefix"
for f in share/ddpbench/reference/torch_ddp_oracle.py share/ddpbench/reference/README.md \
         share/doc/ddpbench/README.md share/doc/ddpbench/docs/gate.md \
         share/doc/ddpbench/reports/SCHEMA.md; do
  [ -f "$WORK/prefix/$f" ] || fail "the prefix has no $f"
done
[ ! -e "$WORK/prefix/share/ddpbench/reference/__pycache__" ] || fail "__pycache__ was installed"

# As a user: the prefix's bin on PATH, nothing else of the build's environment.
user() { (cd "$WORK" && env -i PATH="$WORK/prefix/bin:/usr/bin:/bin" HOME="$WORK" \
  TMPDIR="$WORK" CUDA_VISIBLE_DEVICES= "$@"); }
version=$(user ddpbench --version) || fail "ddpbench --version exited $?"
[[ "$version" == ddpbench\ * ]] || fail "--version printed: $version"
user ddpbench list >"$WORK/list.txt" || fail "ddpbench list exited $?"
grep -q cifar_resnet18 "$WORK/list.txt" || fail "ddpbench list does not name cifar_resnet18"
user ddpbench run --scenario linear_mse --gpus 2 --steps 2 --quiet --out "$WORK/out" \
  >"$WORK/run.txt" 2>&1 || fail "the installed ddpbench run failed: $(tail -5 "$WORK/run.txt")"
grep -q '"passed": true' "$WORK/out/report.json" || fail "the installed run did not pass"
echo "ok: installed into a prefix, $version, list and a checked run pass outside the tree"
