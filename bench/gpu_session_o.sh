#!/usr/bin/env bash
# GPU call O (2026-12-01, sixth session), one short command: after the worker stopped keeping a
# batch's timed outputs alive until the judge read them (each is copied into its readback slot right
# after the call), the problems whose first full batch allocated inside its windows in call N are
# timed again with `reference`, compared with do_bench, their cudaMalloc remarks printed; then
# mkevolve (builtin) on L1/23_Softmax at full size, whose sub-problem inputs are now perturbed on
# the GPU (in call N it ran past 420 s).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
O=${OUT:-/tmp/out}; R=results/scratch/gpu_o; mkdir -p "$O" "$R"
trap 'tar czf "$O/session_o.tgz" "$R" 2>/dev/null' EXIT
t0=$(date +%s); lap() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
KB="python3 -m pytest -p harness.pytest_plugin suites/kernelbench -q -p no:cacheprovider --device cuda --size full --compile-baseline off"
PROBLEMS="--problem L1/40_* --problem L2/40_* --problem L3/1_* --problem L3/43_* --problem L1/19_*"
lap "reference"; timeout ${REF_S:-110} $KB --generator reference --timing-budget-ms 500 $PROBLEMS --runs-dir $R/ref 2>&1 | tail -2
python3 - <<'PY'
import glob, json
for path in sorted(glob.glob("results/scratch/gpu_o/ref/*.jsonl")):
    for line in open(path):
        r = json.loads(line)
        if r.get("type") == "record":
            print(r["problem_id"], r.get("status"), round(r.get("speedup") or 0, 3), "|", "; ".join(r.get("remarks") or []) or "no remarks")
PY
lap "do_bench"; timeout ${CMP_S:-50} python3 bench/gpu_compare.py --first $R/ref --second $R/ref --inductor $R/ref --do-bench > $R/compare.txt 2>&1
grep -v "^reference speedups\|^same candidate" $R/compare.txt | cut -d'|' -f1-6 | tail -8
lap "mkevolve L1/23"; timeout ${MK_S:-120} $KB --generator mkevolve --provider builtin --problem 'L1/23_*' --timing-budget-ms 300 --runs-dir $R/mk 2>&1 | tail -2
python3 - <<'PY'
import glob, json
for path in sorted(glob.glob("results/scratch/gpu_o/mk/*.jsonl")):
    for line in open(path):
        r = json.loads(line)
        if r.get("type") == "record":
            print(r["problem_id"], r.get("status"), r.get("speedup"), (r.get("reason") or "")[:150])
PY
lap "done"
