#!/usr/bin/env bash
# The test command: the harness's own tests and the shipped suites at small size, on the CPU.
# Run files and the megakernel summary go to runs/ (ignored by git), as every run's do; nothing here
# changes a tracked file.
set -euo pipefail
cd "$(dirname "$0")/.."
export TRITON_INTERPRET=1
exec python -m pytest tests suites -n 2 "$@"
