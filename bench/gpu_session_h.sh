#!/usr/bin/env bash
# GPU call H (2026-12-01, third session): the four starter problems that had no GPU verdict yet
# (L1/19, L1/23, L1/26 ran out of memory before the chunked comparisons and fingerprints; L1/36
# failed in the judge before harness_error existed), the compare table over the whole starter set
# (the earlier records are carried in results/scratch/gpu), then the builtin kernels on the
# representative subset at full size for the time left (later calls continue it with --resume).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD  # the harness is not installed there: its plugin comes by -p
O=${OUT:-/tmp/out}; R=results/scratch/gpu; mkdir -p "$O" "$R"
trap 'tar czf "$O/session_h.tgz" "$R" 2>/dev/null' EXIT
t0=$(date +%s); lap() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${CALL_S:-560} - ($(date +%s) - t0) )); }
P="python3 -m pytest -p harness.pytest_plugin suites/kernelbench -q -p no:cacheprovider --device cuda --size full --timing-budget-ms 500"
BIG="--subset starter --problem L1/19_* --problem L1/23_* --problem L1/26_* --problem L1/36_*"
lap "reference, compile baseline on"; timeout 110 $P --generator reference --compile-baseline on $BIG --runs-dir $R/ref1 2>&1 | tail -3
lap "reference again"; timeout 70 $P --generator reference --compile-baseline off $BIG --runs-dir $R/ref2 2>&1 | tail -2
lap "inductor"; timeout 110 $P --generator inductor --compile-baseline off $BIG --runs-dir $R/ind 2>&1 | tail -2
lap "compare"; timeout 80 python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref2 --inductor $R/ind --do-bench > $R/compare.txt 2>&1
tail -19 $R/compare.txt
lap "builtin, representative subset, $(left) s left"
timeout $(left) $P --subset representative --generator direct --provider builtin --compile-baseline off --runs-dir $R/builtin ${RESUME:-} 2>&1 | tail -4
lap "done"
