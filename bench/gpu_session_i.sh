#!/usr/bin/env bash
# GPU call I (2026-12-01, third session): the memory trace of the two starter problems still out of
# memory in call H (L1/36 RMSNorm, 7 GiB per tensor; L1/23 Softmax under inductor) after dropping
# the worker's last reply and the judge's per-batch temporaries and cache; the starter records they
# lacked; the compare table; the builtin subset's last problems; then the exploit corpus on CUDA,
# part 1 of 2, for the time left.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD  # the harness is not installed there: its plugin comes by -p
O=${OUT:-/tmp/out}; R=results/scratch/gpu; mkdir -p "$O" "$R"
trap 'tar czf "$O/session_i.tgz" "$R" 2>/dev/null' EXIT
t0=$(date +%s); lap() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${CALL_S:-560} - ($(date +%s) - t0) )); }
P="python3 -m pytest -p harness.pytest_plugin suites/kernelbench -q -p no:cacheprovider --device cuda --size full --timing-budget-ms 500"
S="--subset starter"
lap "memory trace"
timeout 90 python3 bench/cuda_memory_trace.py --problem 'L1/36_*' --problem 'L1/19_*' --runs-dir $R/memtrace 2>&1 | grep -v "^\[" | tail -14
lap "reference, compile baseline on"; timeout 90 $P --generator reference --compile-baseline on $S --problem 'L1/26_*' --problem 'L1/36_*' --runs-dir $R/ref1 2>&1 | tail -2
lap "reference again"; timeout 45 $P --generator reference --compile-baseline off $S --problem 'L1/36_*' --runs-dir $R/ref2 2>&1 | tail -2
lap "inductor"; timeout 75 $P --generator inductor --compile-baseline off $S --problem 'L1/23_*' --problem 'L1/36_*' --runs-dir $R/ind 2>&1 | tail -2
lap "compare"; timeout 60 python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref2 --inductor $R/ind --do-bench > $R/compare.txt 2>&1
tail -19 $R/compare.txt
lap "builtin, rest of the representative subset"
timeout 70 $P --subset representative --generator direct --provider builtin --compile-baseline off --runs-dir $R/builtin --resume 2>&1 | tail -2
lap "builtin, the two problems that ran out of memory in call H"
timeout 60 $P --subset representative --generator direct --provider builtin --compile-baseline off --problem 'L1/23_*' --problem 'L1/36_*' --runs-dir $R/builtin_big 2>&1 | tail -2
lap "exploits 1/2, $(left) s left"
timeout $(left) python3 -m harness exploits --device cuda --json --shard 1/2 > $R/exploits_1of2.txt 2>&1; echo "exit $?"
grep -v '^{' $R/exploits_1of2.txt | tail -8
lap "done"
