#!/usr/bin/env bash
# install-deps.sh — installs every Debian package ddpbench needs to build, run and test.
# Idempotent: packages already present are skipped, so CI and developers can call it every time.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git pkg-config zlib1g-dev
  libtorch-dev libgloo-dev libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
  python3 python3-torch python3-torchvision chromium
  file  # dpkg-shlibdeps reads the binary with it (cpack -G DEB, tests/install)
  iproute2 util-linux  # ip netns and unshare: the two-host test (tests/multihost)
  dataset-fashion-mnist
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
