#!/usr/bin/env bash
# check_docs_fails_test.sh — check_docs.py can say FAIL: in a scratch tree, a README over 250
# lines, a link to a missing file, a link to a missing heading and a page of docs/ the README does
# not link must each be named, with exit 1; the same tree, mended, passes.
set -euo pipefail
CHECK=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ddpbench-docs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/docs"
{ echo "# t"; echo "[a](docs/a.md#there) [gone](docs/gone.md)"; seq 1 260; } >"$WORK/README.md"
printf '# A\n## Here\n' >"$WORK/docs/a.md"
printf '# B\n[back](../README.md)\n' >"$WORK/docs/b.md"
if python3 "$CHECK" "$WORK" >"$WORK/out.txt"; then
  echo "FAIL: check_docs.py passed a tree with four faults"; cat "$WORK/out.txt"; exit 1
fi
for what in "README.md has 262 lines" "docs/gone.md, which does not exist" \
            "#there, which is no heading" "docs/b.md is not linked"; do
  grep -q "$what" "$WORK/out.txt" || { echo "FAIL: not named: $what"; cat "$WORK/out.txt"; exit 1; }
done
printf '# t\n[a](docs/a.md#here) [b](docs/b.md)\n' >"$WORK/README.md"
python3 "$CHECK" "$WORK" >"$WORK/out.txt" || { echo "FAIL: a mended tree failed"; cat "$WORK/out.txt"; exit 1; }
echo "ok: check_docs.py names each broken link, the long README and the unlinked page"
