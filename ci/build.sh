#!/usr/bin/env bash
# build.sh — installs the Debian dependencies (idempotent) and configures + builds ddpbench (Release,
# Ninja, 2 jobs: a torch TU is heavy and these machines have 2 cores).
#   ci/build.sh                  Debian's libtorch 1.13 (CPU) in ./build: the default.
#   ci/build.sh --torch python   the libtorch inside the PyTorch that `${PYTHON:-python3}` imports
#                                (any 2.x, CUDA or not) in ./build-torch-python.
#   ci/build.sh --target ddpbench   only what that target needs (repeatable): the README's first
#                                command builds the binary alone, not the ~190 targets of the tests.
# DDPBENCH_BUILD_DIR overrides the build folder, DDPBENCH_JOBS the job count; with --torch python,
# DDPBENCH_PEER_BINARY names a ddpbench of another libtorch for the upgrade diff test.
set -euo pipefail
cd "$(dirname "$0")/.."

torch=debian
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --torch) torch="${2:-}"; shift 2 ;;
    --target)
      [ -n "${2:-}" ] || { echo "ci/build.sh: --target needs a target name, e.g. ddpbench" >&2; exit 2; }
      targets+=(--target "$2"); shift 2 ;;
    *) echo "ci/build.sh: unknown argument '$1'; use --torch debian|python or --target NAME" >&2; exit 2 ;;
  esac
done

case "$torch" in
  debian|python) ;;
  *) echo "ci/build.sh: --torch '$torch' is not debian or python" >&2; exit 2 ;;
esac
bash ci/install-deps.sh
case "$torch" in
  debian)
    dir="${DDPBENCH_BUILD_DIR:-build}"
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null ;;
  python)
    python="${PYTHON:-python3}"
    # The torch package root (lib/, include/, share/cmake/Torch): with torch.utils.cmake_prefix_path
    # (its share/cmake) CMake finds Debian's /usr/lib libtorch.so first when both are installed.
    if ! root="$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)"; then
      echo "ci/build.sh: $python cannot import torch; install it (pip install torch) or set PYTHON" >&2
      exit 2
    fi
    dir="${DDPBENCH_BUILD_DIR:-build-torch-python}"
    echo "ci/build.sh: building against $("$python" -c 'import torch; print(torch.__version__)') in $root"
    # The oracle tests run with this interpreter: a 2.x build is checked against 2.x Python.
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$root" \
      -DDDPBENCH_ORACLE_PYTHON="$(command -v "$python")" \
      -DDDPBENCH_PEER_BINARY="${DDPBENCH_PEER_BINARY:-}" >/dev/null ;;
esac
cmake --build "$dir" -j"${DDPBENCH_JOBS:-2}" ${targets[@]+"${targets[@]}"}
