#!/usr/bin/env bash
# GPU call A: core checks on the starter set, the representative subset's reference baselines, and
# several pytest-xdist workers sharing one GPU. Run from the repo root on the GPU machine.
set -u
export PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}
P="python3 -m pytest suites/kernelbench -q -p no:cacheprovider --device cuda --size full"
t0=$(date +%s)
$P --generator reference --subset representative -n 4 --compile-baseline off --runs-dir $O/ref_rep 2>&1 | tail -12
$P --generator reference --subset starter -n 4 --compile-baseline off --runs-dir $O/ref1 2>&1 | tail -5
$P --generator reference --subset starter -n 4 --compile-baseline off --runs-dir $O/ref2 2>&1 | tail -5
t1=$(date +%s); echo "reference runs: $((t1-t0)) s"
$P --generator inductor --subset starter -n 4 --compile-baseline off --runs-dir $O/ind 2>&1 | tail -8
t2=$(date +%s); echo "inductor run: $((t2-t1)) s"
python3 bench/gpu_compare.py --first $O/ref1 --second $O/ref2 --inductor $O/ind --do-bench 2>&1 | tail -25
python3 -m harness.baselines --runs $O/ref_rep $O/ref1 --out $O/H200_baselines.json 2>&1 | tail -6
python3 bench/harness_overhead.py --device cuda --repeats 2 2>&1 | tail -2
python3 bench/harness_overhead.py --device cpu --repeats 2 2>&1 | tail -2
echo "total: $(( $(date +%s) - t0 )) s"
