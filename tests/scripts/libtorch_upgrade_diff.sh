#!/usr/bin/env bash
# libtorch_upgrade_diff.sh — the PyTorch-upgrade check as a user runs it: one scenario traced by
# a ddpbench built on another libtorch (CI: the Debian 1.13 build) and by this one (PyPI 2.x), then
# `ddpbench diff` in both orders with both binaries. It holds that the diff passes (exit 0: an
# upgrade's kernels round differently, and what follows grows from that; nothing diverges),
# never a refusal (the traces are of one experiment and each build reads the other's), that
# libtorch is among the environment fields that differ, that a difference is named down to its
# phase and tensor with a class, and that both orders and both binaries give the same answer.
# It prints the answer (ctest --output-on-failure / -V shows it); README's "What changed?" keeps
# the measured one.
#   libtorch_upgrade_diff.sh OTHER_DDPBENCH THIS_DDPBENCH
set -u
other=${1:?usage: libtorch_upgrade_diff.sh OTHER_DDPBENCH THIS_DDPBENCH}
this=${2:?usage: libtorch_upgrade_diff.sh OTHER_DDPBENCH THIS_DDPBENCH}
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$other" ] || { echo "no other build at $other"; exit 77; }

args=(run --scenario tiny_resnet --gpus 2 --steps 3 --check-only --trace --quiet)
for side in other this; do
  bin=${!side}
  "$bin" "${args[@]}" --out "$scratch/$side" >"$scratch/$side.log" 2>&1
  rc=$?
  [ $rc -le 1 ] || { cat "$scratch/$side.log"; fail "the $side build's run exited $rc"; }
done

answers=()
for bin in "$other" "$this"; do
  for order in "other this" "this other"; do
    set -- $order
    out="$scratch/diff_$(basename "$(dirname "$(dirname "$bin")")")_$1_$2"
    "$bin" diff "$scratch/$1" "$scratch/$2" --out "$out" >"$out.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { cat "$out.log"; fail "diff $1 $2 exited $rc (1: diverged, 2: refused)"; }
    answer=$(python3 - "$out/diff.json" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert int(sys.argv[2]) == (1 if d["failed"] else 0), "exit code disagrees with diff.json"
differs = [f["field"] for f in d["environment"] if f["differs"]]
assert "libtorch" in differs, f"libtorch is not among the fields that differ: {differs}"
f = d["first_difference"]
if f is None:
    print(f"class={d['class']} first=none")
else:
    assert f["phase"] and f["tensor"] and f["class"] in ("rounding", "growth"), f
    assert d["diverged"] == 0, d["verdict"]
    print(f"class={d['class']} first={f['mode']}/{f['step']}/{f['phase']}/{f['tensor']}/{f['class']}")
PY
)
    [ $? -eq 0 ] || fail "diff.json of $bin diff $1 $2: $answer"
    answers+=("$answer")
    echo "$bin diff $1 $2 (exit $rc): $answer"
  done
done
for a in "${answers[@]}"; do
  [ "$a" = "${answers[0]}" ] || fail "the answers differ: ${answers[*]}"
done
cat "$scratch"/diff_*_other_this.log | head -40
echo "OK: ${answers[0]}"
