#!/usr/bin/env bash
# GPU call K (2026-12-01, fourth session): where the eager-vs-do_bench gap of the largest starter
# problems comes from (the timing probe with longer host gaps and a judge-like allocation churn;
# the harness's timed calls traced one by one: cudaMalloc counts and the idle time before each
# batch), where inductor runs out of memory on L1/23 and L1/36 (memory trace), then the first half
# of the CUDA exploit table for the time left.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
O=${OUT:-/tmp/out}; R=results/scratch/gpu; mkdir -p "$O" "$R"
trap 'tar czf "$O/session_k.tgz" "$R" 2>/dev/null' EXIT
t0=$(date +%s); lap() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${CALL_S:-540} - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader
lap "timing probe"
timeout 150 python3 bench/cuda_timing_probe.py --problem 'L1/19_*' --problem 'L1/26_*' --problem 'L2/23_*' \
  --gap-ms 20 --gap-ms 100 --gap-ms 300 2>&1 | tail -5 | tee $R/timing_probe.txt
lap "reference, timed calls traced"
timeout 100 python3 bench/cuda_memory_trace.py --problem 'L1/19_*' --problem 'L1/26_*' --problem 'L2/23_*' \
  --runs-dir $R/trace_ref 2>&1 | grep -v "^\[" | tail -24
lap "inductor L1/23, L1/36, memory traced"
timeout 120 python3 bench/cuda_memory_trace.py --generator inductor --problem 'L1/23_*' --problem 'L1/36_*' \
  --runs-dir $R/trace_ind 2>&1 | grep -v "^\[" | tail -24
lap "exploits 1/2, $(left) s left"
timeout $(left) python3 -m harness exploits --device cuda --json --timing-budget-ms 300 --shard 1/2 > $R/exploits_1of2.txt 2>&1; echo "exit $?"
grep -v '^{' $R/exploits_1of2.txt | tail -8
lap "done"
