#!/usr/bin/env bash
# deb_package_test.sh — `cpack -G DEB` of a build (cmake/ddpbench_package.cmake), then the package
# read as apt would read it: `dpkg-deb -I` must list a Depends that names the package owning every
# library the binary links (dpkg -S), and NVIDIA's package for each CUDA library that dpkg does
# not know; `dpkg-deb -c` must hold the binary, the oracles and the docs under /usr; and the
# binary unpacked from it must start and say its version.
# Usage: deb_package_test.sh BUILD_DIR CPACK
set -euo pipefail
BUILD=$1
CPACK=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ddpbench-deb.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$BUILD/CPackConfig.cmake" ] ||
  { echo "skip: this build packages nothing (libtorch is not the system's)"; exit 77; }
(cd "$WORK" && "$CPACK" -G DEB -B "$WORK" --config "$BUILD/CPackConfig.cmake") \
  >"$WORK/cpack.log" 2>&1 || fail "cpack: $(tail -5 "$WORK/cpack.log")"
deb=$(ls "$WORK"/ddpbench_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "cpack made no ddpbench_*.deb: $(tail -5 "$WORK/cpack.log")"

dpkg-deb -I "$deb" >"$WORK/info.txt"
depends=$(sed -n 's/^ Depends: //p' "$WORK/info.txt")
[ -n "$depends" ] || fail "dpkg-deb -I lists no Depends: $(cat "$WORK/info.txt")"
# Package names only: "libtorch1.13 (>= 1.13.1), libc6 (>= 2.34)" -> " libtorch1.13 libc6 ".
names=" $(echo "$depends" | tr ',|' '\n\n' | sed 's/(.*)//; s/^ *//; s/ *$//' | tr '\n' ' ') "

checked=0
for lib in $(readelf -d "$BUILD/harness/ddpbench" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'); do
  path=$(ldd "$BUILD/harness/ddpbench" | awk -v l="$lib" '$1 == l { print $3 }')
  [ -n "$path" ] || fail "ldd cannot resolve $lib"
  owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1 || true)
  [ -n "$owner" ] || owner=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1 || true)
  if [ -n "$owner" ]; then
    [[ "$names" == *" $owner "* ]] || fail "$lib belongs to $owner, which Depends does not name: $depends"
  else
    case $lib in
      libcudart.so.*) [[ "$names" == *" cuda-cudart-"* ]] || fail "$lib: Depends names no cuda-cudart-*: $depends" ;;
      libnccl.so.*) [[ "$names" == *" libnccl2 "* ]] || fail "$lib: Depends does not name libnccl2: $depends" ;;
      *) fail "$lib ($path) belongs to no package and the package does not say where it comes from" ;;
    esac
  fi
  checked=$((checked + 1))
done
[ "$checked" -gt 3 ] || fail "only $checked NEEDED libraries were read from the binary"

dpkg-deb -c "$deb" >"$WORK/contents.txt"
for f in ./usr/bin/ddpbench ./usr/share/ddpbench/reference/torch_ddp_oracle.py \
         ./usr/share/doc/ddpbench/README.md; do
  grep -q " $f\$" "$WORK/contents.txt" || fail "the package does not hold $f"
done

dpkg-deb -x "$deb" "$WORK/root"
version=$(env -i PATH=/usr/bin:/bin CUDA_VISIBLE_DEVICES= "$WORK/root/usr/bin/ddpbench" --version) ||
  fail "the packaged ddpbench --version exited $?"
[[ "$version" == ddpbench\ * ]] || fail "the packaged --version printed: $version"
echo "ok: $(basename "$deb"): Depends covers all $checked linked libraries ($depends); $version"
