#!/usr/bin/env bash
# GPU call B: the exploit corpus's GPU classes and controls, builtin kernels' speedups on the
# representative subset (L1, L2) at full size, two xdist workers sharing one GPU, and the
# megakernel validator's throughput on an idle CPU core. Run from the repo root on the GPU machine.
set -u
export PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}
t0=$(date +%s)
python3 bench/megakernel_bench.py 2>&1 | tail -14
echo "--- exploits (GPU classes and controls)"; t=$(date +%s)
python3 -m harness exploits --device cuda --only '*_gpu' --only '00_*' --timing-budget-ms 300 2>&1 | tail -24
echo "exploits: $(( $(date +%s) - t )) s"; t=$(date +%s)
P="python3 -m pytest suites/kernelbench -q -p no:cacheprovider --device cuda --size full"
$P --generator direct --provider builtin --subset representative --level 1,2 --compile-baseline off \
   --timing-budget-ms 300 --runs-dir $O/builtin 2>&1 | tail -6
echo "builtin: $(( $(date +%s) - t )) s"; t=$(date +%s)
python3 bench/multi_gpu.py --out $O/multi --workers 1,2 --subset starter --problem 'L1/1_*' --problem 'L1/95_*' --problem 'L1/47_*' --problem 'L2/9_*' --budget-ms 200 2>&1 | head -8
echo "multi: $(( $(date +%s) - t )) s; total $(( $(date +%s) - t0 )) s"
