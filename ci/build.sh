#!/usr/bin/env bash
# build.sh — installs the Debian dependencies (idempotent) and configures + builds ddpbench in
# ./build (Release, Ninja, 2 jobs: a torch TU is heavy and these machines have 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"${DDPBENCH_JOBS:-2}"
