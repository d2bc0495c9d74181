#!/usr/bin/env bash
# GPU call C: builtin kernels on the representative subset's Level 2 at full size (after the CUDA
# IPC release fix), then mkevolve (builtin provider) on part of it.
set -u
export PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}
P="python3 -m pytest suites/kernelbench -q -p no:cacheprovider --device cuda --size full --compile-baseline off --timing-budget-ms 300"
t=$(date +%s)
$P --generator direct --provider builtin --subset representative --level 2 --runs-dir $O/builtin_l2 2>&1 | tail -4
echo "builtin L2: $(( $(date +%s) - t )) s"; t=$(date +%s)
timeout 170 $P --generator mkevolve --provider builtin --subset representative --level 2 --problem 'L2/1_*' --problem 'L2/9_*' --problem 'L2/23_*' --runs-dir $O/mkevolve 2>&1 | tail -4
echo "mkevolve: $(( $(date +%s) - t )) s"
nvidia-smi --query-gpu=memory.used --format=csv
