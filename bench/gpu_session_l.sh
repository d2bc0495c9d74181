#!/usr/bin/env bash
# GPU call L (2026-12-01, fourth session): the starter set with the timing fix of this session (the
# judge keeps its cached blocks through timing; the worker collects IPC-sent outputs before each
# batch), twice, compared with do_bench; inductor records are the earlier calls' (carried in
# results/scratch/gpu/ind); then the CUDA exploit table, resumable through --jsonl.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
O=${OUT:-/tmp/out}; R=results/scratch/gpu; mkdir -p "$O" "$R"
trap 'tar czf "$O/session_l.tgz" "$R" 2>/dev/null' EXIT
t0=$(date +%s); lap() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${CALL_S:-550} - ($(date +%s) - t0) )); }
P="python3 -m pytest -p harness.pytest_plugin suites/kernelbench -q -p no:cacheprovider --device cuda --size full --timing-budget-ms 500 --compile-baseline off --generator reference --subset starter"
if [ -z "${SKIP_STARTER:-}" ]; then
  lap "reference, starter set"; timeout 220 $P --runs-dir $R/ref1 2>&1 | tail -2
  lap "reference again"; timeout 200 $P --runs-dir $R/ref2 2>&1 | tail -2
  lap "compare"; timeout 90 python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref2 --inductor $R/ind --do-bench > $R/compare.txt 2>&1
  tail -19 $R/compare.txt
  python3 - <<'PY'
import glob, json
for path in sorted(glob.glob("results/scratch/gpu/ref[12]/*.jsonl")):
    for line in open(path):
        r = json.loads(line)
        if r.get("type") == "record" and r.get("remarks"):
            print(path.split("/")[3], r["problem_id"], "|", "; ".join(x.split(" timed calls")[0] for x in r["remarks"]))
PY
fi
lap "exploits, $(left) s left"
timeout $(left) python3 -m harness exploits --device cuda --timing-budget-ms 300 --jsonl $R/exploits_cuda.jsonl ${SHARD:-} > $R/exploits_table.txt 2>$R/exploits_progress.txt; echo "exit $?"
grep -c . $R/exploits_cuda.jsonl; grep -v ": ok$\|: stopped\|: neutralised$" $R/exploits_progress.txt | tail -8
lap "done"
