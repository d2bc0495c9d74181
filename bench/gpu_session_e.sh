#!/usr/bin/env bash
# GPU call E (2026-12-01): finish issue 2's starter-set checks after call D (whose records, carried
# back in results/scratch/gpu, stay in the same folders): the three problems that ran out of GPU
# memory there (fixed since: chunked comparisons), and the ones its time limits cut off. Then the
# compare table over all records, and the harness's overhead (fresh worker and adopted spare).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD  # the harness is not installed there: its plugin comes by -p
O=${OUT:-/tmp/out}; R=results/scratch/gpu; mkdir -p "$O" "$R"
trap 'tar czf "$O/session_e.tgz" "$R" 2>/dev/null' EXIT
t0=$(date +%s); lap() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
P="python3 -m pytest -p harness.pytest_plugin suites/kernelbench -q -p no:cacheprovider --device cuda --size full --subset starter --timing-budget-ms 500"
BIG="--problem L1/19_* --problem L1/23_* --problem L1/26_*"
L3="--problem L3/1_* --problem L3/43_*"
lap "reference, compile baseline on"
timeout 130 $P --generator reference --compile-baseline on $BIG $L3 --runs-dir $R/ref1 2>&1 | tail -3
lap "reference again, compile baseline off"
timeout 80 $P --generator reference --compile-baseline off $BIG $L3 --problem 'L2/40_*' --runs-dir $R/ref2 2>&1 | tail -3
lap "inductor"
timeout 240 $P --generator inductor --compile-baseline off $BIG $L3 \
  --problem 'L2/*' --runs-dir $R/ind 2>&1 | tail -4
lap "compare"
timeout 60 python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref2 --inductor $R/ind --do-bench > $R/compare.txt 2>&1
nvidia-smi --query-gpu=memory.used --format=csv,noheader
tail -22 $R/compare.txt
lap "done"
