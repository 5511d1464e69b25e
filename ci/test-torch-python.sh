#!/usr/bin/env bash
# test-torch-python.sh — builds ddpbench against the pinned PyPI PyTorch (ci/torch-venv.sh, cached)
# in ./build-torch-python and runs the test suite there, the Python oracles with that torch. It
# leaves out the tests labelled torch_independent (tests/CMakeLists.txt: flags, refusals, files,
# signals, report reading and gating, which ddpbench's own code decides whatever torch it links;
# the Debian suite runs them). Without a GPU the CUDA paths compile and link, and the GPU tests
# skip with their reason.
set -euo pipefail
cd "$(dirname "$0")/.."
python="$(ci/torch-venv.sh)"
# The Debian 1.13 build, when .ci/run built it first: the upgrade diff test traces beside it.
peer="$PWD/${DDPBENCH_PEER_BUILD_DIR:-build}/harness/ddpbench"
[ -x "$peer" ] || peer=""
PYTHON="$python" DDPBENCH_PEER_BINARY="$peer" ci/build.sh --torch python
ctest --test-dir "${DDPBENCH_BUILD_DIR:-build-torch-python}" --output-on-failure -j2 \
  -LE torch_independent
