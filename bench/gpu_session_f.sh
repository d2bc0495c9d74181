#!/usr/bin/env bash
# GPU call F (2026-12-01): finish the builtin run (resume), every KernelBench problem at full size
# reference against reference (correctness only: no timing, so six workers share the GPU), and
# mkevolve with the builtin provider on the representative Level 2 at full size.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD  # the harness is not installed there: its plugin comes by -p
O=${OUT:-/tmp/out}; R=results/scratch/gpu; mkdir -p "$O" "$R"
trap 'tar czf "$O/session_f.tgz" "$R" 2>/dev/null' EXIT
t0=$(date +%s); lap() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
P="python3 -m pytest -p harness.pytest_plugin suites/kernelbench -q -p no:cacheprovider --device cuda --size full"
if [ -d $R/builtin ]; then
  lap "builtin, resumed"
  timeout ${BUILTIN_S:-120} $P --subset representative --generator direct --provider builtin --compile-baseline off \
    --timing-budget-ms 500 --runs-dir $R/builtin --resume 2>&1 | tail -5
fi
lap "all 250, reference, correctness at full size"
timeout ${ALL_S:-230} $P --generator reference --no-timing -n 6 --runs-dir $R/all 2>&1 | tail -8
lap "mkevolve, representative L2"
timeout ${MK_S:-150} $P --subset representative --level 2 --generator mkevolve --provider builtin --compile-baseline off \
  --timing-budget-ms 300 --runs-dir $R/mkevolve 2>&1 | tail -5
lap "done"
