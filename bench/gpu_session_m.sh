#!/usr/bin/env bash
# GPU call M (2026-12-01, fifth session), in stages that each fit one command (STAGE=1, 2 or 3):
#   1  the starter set with `reference`, twice, compared with do_bench: checked timed outputs now
#      come back through judge-owned readback buffers (the worker's blocks never enter CUDA IPC);
#   2  the CUDA exploit table: the 17 candidates not yet judged (continuing the --jsonl file), then
#      the candidates whose verdict rests on checked timed outputs, again under the new code;
#      then mkevolve (builtin) on the representative subset at full size, resumable;
#   3  mkevolve resumed, then `reference` baselines with torch.compile, resumable.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
O=${OUT:-/tmp/out}; R=results/scratch/gpu; mkdir -p "$O" "$R"
STAGE=${STAGE:-1}
trap 'tar czf "$O/session_m$STAGE.tgz" --exclude="$R/ind" "$R" 2>/dev/null' EXIT
t0=$(date +%s); lap() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${CALL_S:-560} - ($(date +%s) - t0) )); }
KB="python3 -m pytest -p harness.pytest_plugin suites/kernelbench -q -p no:cacheprovider --device cuda --size full"
MK="$KB --generator mkevolve --provider builtin --subset representative --compile-baseline off --timing-budget-ms 300 --runs-dir $R/mk --resume"
mk() { lap "mkevolve, $(left) s left"; timeout $(( $(left) - ${1:-0} )) $MK 2>&1 | grep -v "^\.\|^$" | tail -6; }
case $STAGE in
1)
  P="$KB --timing-budget-ms 500 --compile-baseline off --generator reference --subset starter"
  lap "reference, starter set"; timeout 230 $P --runs-dir $R/ref1 2>&1 | tail -2
  lap "reference again"; timeout 210 $P --runs-dir $R/ref2 2>&1 | tail -2
  lap "compare"; timeout $(left) python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref2 --inductor $R/ind --do-bench > $R/compare.txt 2>&1
  tail -19 $R/compare.txt
  python3 - <<'PY'
import glob, json
for path in sorted(glob.glob("results/scratch/gpu/ref[12]/*.jsonl")):
    for line in open(path):
        r = json.loads(line)
        if r.get("type") == "record" and r.get("remarks"):
            print(path.split("/")[3], r["problem_id"], "|", "; ".join(x.split(" timed calls")[0] for x in r["remarks"]))
PY
  ;;
2)
  X="python3 -m harness exploits --device cuda --timing-budget-ms 300"
  lap "exploits not yet judged"; timeout 260 $X --jsonl $R/exploits_cuda.jsonl > $R/exploits_table.txt 2>$R/exploits_progress.txt; echo "exit $?"
  grep -c . $R/exploits_cuda.jsonl; grep -v ": ok$\|: stopped\|: neutralised$" $R/exploits_progress.txt | tail -8
  lap "exploits resting on checked timed outputs, again"
  timeout 200 $X --jsonl $R/exploits_readback.jsonl --only '01_*' --only '05_input_mutation_timed_only' --only '15_*' \
    --only '17_*' --only '18_memo_last_output' --only '18_memo_data_pointer' --only '20_*' \
    > $R/exploits_readback_table.txt 2>$R/exploits_readback_progress.txt; echo "exit $?"
  tail -16 $R/exploits_readback_table.txt
  mk
  ;;
3)
  mk 200
  B="$KB --generator reference --compile-baseline on --timing-budget-ms 300 --runs-dir $R/base --resume"
  lap "baselines, $(left) s left"; timeout $(left) $B 2>&1 | grep -v "^\.\|^$" | tail -6
  ;;
esac
lap "done"
