#!/usr/bin/env bash
# GPU call G (2026-12-01): the starter set's three 6 GiB-per-tensor problems again after the CUDA
# IPC collection fix (calls D and E ran them out of GPU memory), the compare table over all of the
# starter records, then the builtin kernels on representative Level 1 for what time is left.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD  # the harness is not installed there: its plugin comes by -p
O=${OUT:-/tmp/out}; R=results/scratch/gpu; mkdir -p "$O" "$R"
trap 'tar czf "$O/session_g.tgz" "$R" 2>/dev/null' EXIT
t0=$(date +%s); lap() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
P="python3 -m pytest -p harness.pytest_plugin suites/kernelbench -q -p no:cacheprovider --device cuda --size full --timing-budget-ms 500"
BIG="--subset starter --problem L1/19_* --problem L1/23_* --problem L1/26_*"
lap "reference, compile baseline on"; timeout 75 $P --generator reference --compile-baseline on $BIG --runs-dir $R/ref1 2>&1 | tail -2
lap "reference again"; timeout 45 $P --generator reference --compile-baseline off $BIG --runs-dir $R/ref2 2>&1 | tail -2
lap "inductor"; timeout 80 $P --generator inductor --compile-baseline off $BIG --runs-dir $R/ind 2>&1 | tail -2
lap "compare"; timeout 45 python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref2 --inductor $R/ind --do-bench > $R/compare.txt 2>&1
lap "builtin, representative L1"
timeout ${BUILTIN_S:-50} $P --subset representative --level 1 --generator direct --provider builtin --compile-baseline off --runs-dir $R/builtin 2>&1 | tail -2
tail -19 $R/compare.txt; lap "done"
