#!/usr/bin/env bash
# deb_package_fails_test.sh — deb_package_test.sh can say FAIL: the build's CPack configuration
# with dpkg-shlibdeps switched off makes a package whose Depends names only the CUDA packages, and
# the check must name a linked library whose package is missing, with exit 1.
# Usage: deb_package_fails_test.sh BUILD_DIR CPACK
set -euo pipefail
BUILD=$1
CPACK=$2
HERE=$(dirname "$0")
[ -f "$BUILD/CPackConfig.cmake" ] ||
  { echo "skip: this build packages nothing (libtorch is not the system's)"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ddpbench-deb-fails.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
sed 's/set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS "ON")/set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS "OFF")/' \
  "$BUILD/CPackConfig.cmake" >"$WORK/CPackConfig.cmake"
grep -q 'SHLIBDEPS "OFF"' "$WORK/CPackConfig.cmake" || { echo "FAIL: could not switch shlibdeps off"; exit 1; }
ln -s "$(cd "$BUILD" && pwd)/harness" "$WORK/harness"
rc=0
bash "$HERE/deb_package_test.sh" "$WORK" "$CPACK" >"$WORK/out.txt" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: the check exited $rc on a package without Debian Depends: $(cat "$WORK/out.txt")"; exit 1; }
grep -q "which Depends does not name" "$WORK/out.txt" ||
  { echo "FAIL: the check failed without naming the missing package: $(cat "$WORK/out.txt")"; exit 1; }
echo "ok: a package without dpkg-shlibdeps' Depends FAILs: $(tail -1 "$WORK/out.txt")"
