#!/usr/bin/env bash
# torch-venv.sh — the pinned PyPI PyTorch that CI builds and tests against besides Debian's 1.13:
# a virtual environment with torch + torchvision (the Python oracles import torchvision), kept
# in a cache folder so a warm machine does not download the 4–5 GB of wheels again. Prints the
# environment's python on stdout (everything else goes to stderr).
#   DDPBENCH_CACHE        cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/ddpbench)
#   DDPBENCH_TORCH_PINS   the pins (default below); a different pin set gets its own environment
set -euo pipefail

pins="${DDPBENCH_TORCH_PINS:-torch==2.11.0 torchvision==0.26.0}"
cache="${DDPBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ddpbench}"
# One environment per pin set: the folder is named after the torch pin.
torch_pin="$(printf '%s\n' $pins | grep '^torch==' | head -n1 || true)"
if [ -z "$torch_pin" ]; then
  echo "ci/torch-venv.sh: DDPBENCH_TORCH_PINS '$pins' pins no torch==VERSION; add one" >&2
  exit 2
fi
venv="$cache/venv-torch-${torch_pin#torch==}"
stamp="$venv/.ddpbench-pins"

# The stamp is written only after pip succeeded: a half-installed environment is rebuilt.
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pins" ] && "$venv/bin/python" -c 'import torch, torchvision' 2>/dev/null; then
  echo "ci/torch-venv.sh: reusing $venv ($pins)" >&2
else
  echo "ci/torch-venv.sh: creating $venv ($pins; downloads several GB once)" >&2
  rm -rf "$venv"
  mkdir -p "$cache"
  python="$(command -v python3)"
  if ! "$python" -m venv "$venv" >&2; then
    echo "ci/torch-venv.sh: '$python -m venv' failed; install python3-venv (apt-get install python3-venv)" >&2
    exit 2
  fi
  # shellcheck disable=SC2086  # the pins are a word list
  "$venv/bin/python" -m pip install --quiet --no-input $pins >&2
  printf '%s' "$pins" >"$stamp"
fi
echo "$venv/bin/python"
