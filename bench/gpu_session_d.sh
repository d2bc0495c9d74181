#!/usr/bin/env bash
# GPU call D (2026-12-01): issue 2's core checks on the starter set at full size (reference twice,
# inductor once, eager against do_bench) and the megakernel validator's throughput on an idle core.
# Every step has its own time limit so the call ends inside the device's 10 minutes; records are on
# disk as they are made and all of them come back in one tarball.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD  # the harness is not installed there: its plugin comes by -p
O=${OUT:-/tmp/out}; R=results/scratch/gpu; mkdir -p "$O" "$R"
trap 'tar czf "$O/session_d.tgz" "$R" 2>/dev/null' EXIT
t0=$(date +%s); lap() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm,temperature.gpu --format=csv,noheader
lap "megakernel throughput"
timeout 100 python3 bench/megakernel_bench.py --skip-corpus 2>&1 | tail -8
P="python3 -m pytest -p harness.pytest_plugin suites/kernelbench -q -p no:cacheprovider --device cuda --size full --subset starter --timing-budget-ms 500"
lap "reference, compile baseline on"
timeout 200 $P --generator reference --compile-baseline on --runs-dir $R/ref1 2>&1 | tail -6
lap "reference again, compile baseline off"
timeout 110 $P --generator reference --compile-baseline off --runs-dir $R/ref2 2>&1 | tail -4
lap "inductor"
timeout 150 $P --generator inductor --compile-baseline off --runs-dir $R/ind 2>&1 | tail -6
lap "compare"
timeout 70 python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref2 --inductor $R/ind --do-bench 2>&1 | tail -22
lap "done"
