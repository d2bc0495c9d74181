#!/usr/bin/env bash
# The test command: the harness's own tests and the shipped suites at small size, on the CPU.
# Run files and the megakernel summary go to results/scratch/ (ignored by git), not to the published
# results/runs/ and results/megakernel/.
set -euo pipefail
cd "$(dirname "$0")/.."
export TRITON_INTERPRET=1
exec python -m pytest tests suites -n 2 --runs-dir results/scratch --mk-summary results/scratch/megakernel_summary.json "$@"
