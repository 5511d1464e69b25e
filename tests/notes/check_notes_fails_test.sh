#!/usr/bin/env bash
# check_notes_fails_test.sh — check_notes.py can say FAIL: in a scratch repository, a Note cited
# and defined nowhere, a Note defined twice and a contract cited by number must each be named,
# with exit 1; the same tree, mended, passes.
set -euo pipefail
CHECK=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ddpbench-notes.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
git -C "$WORK" init -q
cat >"$WORK/a.h" <<'H'
// Note [Defined twice]: here.
// see Note [Nowhere], and docs/ARCHITECTURE.md, contract 3.
H
cat >"$WORK/b.cpp" <<'H'
// Note [Defined twice]: and here.
H
git -C "$WORK" add a.h b.cpp
if python3 "$CHECK" "$WORK" >"$WORK/out.txt"; then
  echo "FAIL: check_notes.py passed a tree with three wrong Notes"; cat "$WORK/out.txt"; exit 1
fi
for what in "Note \[Nowhere\] is cited" "Note \[Defined twice\] is defined 2 times" "contract 3"; do
  grep -q "$what" "$WORK/out.txt" || { echo "FAIL: not named: $what"; cat "$WORK/out.txt"; exit 1; }
done
printf '// Note [Defined twice]: here.\n// see Note [Defined twice].\n' >"$WORK/a.h"
printf '// nothing\n' >"$WORK/b.cpp"
python3 "$CHECK" "$WORK" >"$WORK/out.txt" || { echo "FAIL: a mended tree failed"; cat "$WORK/out.txt"; exit 1; }
echo "ok: check_notes.py names each wrong Note and passes the mended tree"
