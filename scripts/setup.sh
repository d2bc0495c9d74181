#!/usr/bin/env bash
# Set up a fresh machine: PyTorch (the CPU build on CPU machines), Triton, this project with every
# extra, and headless Chromium for the leaderboard's page test. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

python -m pip install --quiet --upgrade pip
# torch 2.13.0 is the CPU build this workplace keeps on disk; a plain 'torch' would pull a CUDA build.
python -c "import torch" 2>/dev/null || python -m pip install --quiet "torch==2.13.0"
python -m pip install --quiet -e ".[dev]"

if ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "note: chromium not installed (needs root and apt-get); the leaderboard's page test will be skipped" >&2
  fi
fi
python -c "import harness, torch, triton; print('crucible', harness.__version__, 'torch', torch.__version__, 'triton', triton.__version__)"
