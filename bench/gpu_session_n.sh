#!/usr/bin/env bash
# GPU call N (prepared 2026-12-01 for the next session), in stages that each fit one command:
#   STAGE=1  the starter set with `reference`, twice, compared with do_bench, after the worker's
#            thread scan stopped keeping timed outputs alive (docs/HARNESS.md, "Timing and
#            do_bench"); prints each record's in-window cudaMalloc remark (with OOM retries);
#   STAGE=2  mkevolve (builtin) on the representative subset at full size, resumable;
#   STAGE=3  `reference` baselines with torch.compile, resumable (about 28 s a problem);
#   STAGE=4  the fp32 matmul precision probe (L1/1's size, then K = 8192), about 30 s;
#   STAGE=5  mkevolve again, in a new resumable run, on the problems the float64 second look and the
#            slower-than-PyTorch rule (both 2026-12-02, after call Q) should change: L1/1, 6, 18
#            (rejected against cuBLAS at 1e-4) and L2/23, 28, 33, L3/1, 5, 20 (below 0.9x).
# STAGE=1 ends with bench/cuda_timing_probe.py on the problems furthest from do_bench in call N
# (L1/95, L2/23) and the one outside 0.9-1.1 (L1/47), with the end-event and rotating-input variants.
# Calls N and O ran STAGE=1 and 2, call P (2026-12-02) STAGE=1, the baselines and mkevolve through
# Level 1, calls Q1 and Q2 STAGE=4, STAGE=2 through L3/20 and STAGE=3 through L1/21, calls R1-R3
# STAGE=5 through L3/5, STAGE=2 to the subset's end and STAGE=3 through L1/37 (docs/MEASUREMENTS.md).
#   STAGE=7  bench/cuda_timer_correction.py (the synchronize's round trip taken out of the window).
#   STAGE=8  the missing Level 3 baselines and the four failed compile baselines, with the corrected
#            timer the worker adopted on 2026-12-05 (a new run under $R/base2).
#   STAGE=9  the starter set twice and do_bench, then the GPU exploit corpus, with the corrected timer.
#   STAGE=12 (any GPU) the compile baseline on whole Level 3 networks, inductor's pool given back to
#            the harness's own code (2026-12-06).
#   STAGE=13 (any GPU) bench/cuda_timing_probe.py with the input-touch variant (L2/23 vs do_bench).
#   STAGE=14 (any GPU) the quick probe, the starter set, do_bench, the starter set again, then
#            `inductor` on the starter set (call Y1, 2026-12-06, with a worker that touched its inputs).
#   STAGE=16 (any GPU) `inductor` on the four starter problems call Z5 did not reach (2026-12-06).
#   STAGE=6  mkevolve, a new resumable run on L3/43 and L3/5, the problems the two fixes made after
#            calls R1-R2 should change (views made next to their readers: L3/43's q @ k.T unit; the
#            below_sol floor without convolution FLOPs: AlexNet's ReLU + conv5 unit), about 5 min.
# STAGE=3 ends with bench/phase_summary.py over the records that carry phases_s (2026-12-03 on).
# Calls S1-S3 (2026-12-03) ran STAGE=6 whole and STAGE=3 through L1/88.
# Calls T1-T3 (2026-12-04) ran STAGE=3 through L2/16; T2 started on a fresh machine and so from
# the committed file, and measured T1's 24 problems again (kept as results/repeats/h200/).
# STAGE=5 (L3/20 only is left) is still open. Between calls, copy the returned run files into results/runs/h200/ at once:
# a machine released between calls (idle for 30 s) comes back fresh and seeds from the working
# tree. Keep CALL_S at least 40 s below the call's limit_s (less when the budget is nearly spent),
# so that the last snapshot is whole. Copy $R/mk3 into results/runs/h200/mkevolve_fixes/ afterwards.
# Copy $R/mk and $R/base from the returned tarball back into the committed run files afterwards
# ($R/mk2 into results/runs/h200/mkevolve_rerun/).
# The compare reads inductor speedups from the committed H200 inductor runs (the latest record of a
# problem wins). Never carry results/scratch/gpu: a carried path replaces what earlier stages wrote.
# Calls U1-U2 (2026-12-05) ran STAGE=3 through L3/14 (stop 22's session had measured L2/17-82); U3 was
# lost when the machine was taken back. Next: STAGE=3 again (L3/15-42 and L3/44-50, about 35 s each),
# then the compile baselines of L3/7, 9, 10 and 14, which failed in inductor (their records now keep
# the whole reason in baseline_errors): rerun those four in a new --runs-dir, not --resume.
# Calls V0-V2 (2026-12-05): the corrected timer (STAGE=7 on an H100, adopted by the worker), STAGE=8
# through L3/31 on an H200 (compile failed in the sandbox on 14 of 18; workers now compile in-process).
# Calls W0-W7 (2026-12-05): four calls for nvidia-h200 all got H100s; STAGE=10 and 11 ran there
# (FALLBACK_STAGE), and a compile check of L3/19 and L3/16 with one in-process compile thread recorded
# nothing in 150 s: Level 3 compile baselines may now take minutes each, so STAGE=8's reruns will need
# several calls. Then: STAGE=8 again (the rest of Level 3, then the reruns), then STAGE=9 on an H200.
# Calls X1-X2 (2026-12-06): the compile pool given back to the harness's own code (X1, STAGE=12 on an
# H100: five whole networks compiled); STAGE=9 on an H200 (X2), then STAGE=8 through L3/36 and the
# reruns of L1/12, 71, 78. Next: STAGE=8 again (L3/37-42, 44-50, then the Level 3 compile reruns,
# 10-95 s of compile each), on an H200; copy $R/base2 and $R/base3 as STAGE=8 says.
# Calls Y0-Y1 (2026-12-06): twelve calls got no machine (1,291 s); Y1 (an H100) ran STAGE=14 with a worker
# that touched its inputs' pages, since taken out. Next: STAGE=8 on an H200, as the X1-X2 note says.
# Call Z1 (2026-12-06): an H100 again; STAGE=15 ran (the queued spin and do_bench's 256 MiB flush took
# most of L2/23's gap away in the probe: launch latency). Next: STAGE=8 on an H200 (PROBE_FIRST=1 once).
# Calls Z2-Z5 (2026-12-06): no H200 came in three sessions (Z2, Z3 and one more stopped on H100s); Z4 and
# Z5 ran STAGE=14 on H100s (Z5's files: results/runs/h100/starter_2026-12-06_z5/). Next: STAGE=8 on an H200.
# Calls AA1-AA2 (2026-12-06, an H200): STAGE=8 finished: L3/37-42 and L3/44-50, then every rerun
# (results/gpu/level3_baselines_2026-12-06_h200.txt). Nothing of STAGE=8 is left; results/baselines/H200.json
# covers all 250 problems.
# Session 21 (2026-12-07): STAGE=17 (issue #2 on an H200: inductor, reference and do_bench, reference
# again, all resumable) and STAGE=18 (the exploit corpus's GPU cases, as FALLBACK_STAGE) written; in
# twenty calls no H200 came (one H100 came and stopped at the device check; the next call on it was
# lost when the machine was taken back). Next: STAGE=17 CALL_S=550 on an H200, then STAGE=17 again on
# the same warm machine for what the first call did not reach.
# Session 22 (2026-12-07): no H200 in eight calls; one H100 (BB1, STAGE=18: the exploit corpus's GPU
# cases, 9 passed, without the hold) and on it bench/cuda_hold_probe.py (BB2). The hold went into the
# worker behind CRUCIBLE_CUDA_HOLD=1 (off by default), untried there on a GPU. Next, on any GPU:
# `CRUCIBLE_CUDA_HOLD=1 STAGE=20 REQUIRE_GPU=H bash bench/gpu_session_n.sh` (about 280 s); if it holds,
# on an H200: `CRUCIBLE_CUDA_HOLD=1 STAGE=17 CALL_S=550 bash bench/gpu_session_n.sh`, twice.
# Session 23 (2026-12-07): on an H100 (BB3) the hold's GPU tests passed and STAGE=20 with the hold
# and the host-time floor put the starter set within 3.6% of do_bench; BB4 (FALLBACK_STAGE=18) passed
# the exploit corpus's GPU cases with it; the hold is now the default (CRUCIBLE_CUDA_HOLD=0 turns it
# off). Next, on an H200: `STAGE=17 FALLBACK_STAGE=18 CALL_S=560 bash bench/gpu_session_n.sh`, twice.
# Session 24 (2026-12-07): no H200 in twelve calls; two H100s: CC1 (FALLBACK_STAGE=18, the exploit
# corpus's GPU cases, 12 passed) and CC2 (bench/harness_overhead.py --device cuda). Next, on an H200:
# `STAGE=17 FALLBACK_STAGE=18 CALL_S=560 bash bench/gpu_session_n.sh`, twice on the same machine; or,
# with one short call only, `STAGE=17 IND_FIRST=1 REF2_LAST=1` (inductor, then do_bench against its
# eager medians, then `reference`).
# The device is checked first: baselines belong to one kind of GPU (REQUIRE_GPU, default H200), and a
# call that lands on another kind stops before it measures anything (the runner would also refuse
# to --resume an H200 run file on another machine).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case "$GPU_NAME" in
  *"${REQUIRE_GPU:-H200}"*) echo "device: $GPU_NAME" ;;
  *) [ -n "${FALLBACK_STAGE:-}" ] || { echo "device is '$GPU_NAME', not ${REQUIRE_GPU:-H200}: stopping before any run"; exit 3; }
     echo "device is '$GPU_NAME', not ${REQUIRE_GPU:-H200}: STAGE=$FALLBACK_STAGE instead"; STAGE=$FALLBACK_STAGE ;;
esac
O=${OUT:-/tmp/out}; R=results/scratch/gpu; mkdir -p "$O" "$R"
STAGE=${STAGE:-1}
# (FALLBACK_STAGE names a stage that any GPU may run, for a call that lands on another kind.)
# Resumed runs start from the committed ones (a fresh machine has no results/scratch), so --resume
# skips what earlier sessions measured and appends to the same run file.
seed() { [ -n "$(ls "$1" 2>/dev/null)" ] || { mkdir -p "$1"; cp $2 "$1"/; }; }
seed $R/mk "results/runs/h200/mkevolve/20261201T233851Z-129925_*"
seed $R/base "results/runs/h200/20261202T040205Z-f5578f_*"
[ -n "$(ls results/runs/h200/mkevolve_rerun 2>/dev/null)" ] && seed $R/mk2 "results/runs/h200/mkevolve_rerun/*"
[ -n "$(ls results/runs/h200/mkevolve_fixes 2>/dev/null)" ] && seed $R/mk3 "results/runs/h200/mkevolve_fixes/*"
[ -n "$(ls results/runs/h200/corrected_timer 2>/dev/null)" ] && seed $R/base2 "results/runs/h200/corrected_timer/*"
[ -n "$(ls results/runs/h200/corrected_timer_rerun 2>/dev/null)" ] && seed $R/base3 "results/runs/h200/corrected_timer_rerun/*"
# What comes back is what lies under $O when the call ends. A call killed at its limit (rc 124/137)
# never runs the EXIT trap, and a tar cut short comes back empty (call T3, 2026-12-04, lost 519 s
# of baselines that way), so a snapshot is written every SNAP_S seconds under a temporary name and
# renamed over the last whole one. The final snapshot takes its own temporary name: a periodic tar
# still running when the loop is killed must not write into it.
snap() { tar czf "$O/$1" "$R" 2>/dev/null && mv -f "$O/$1" "$O/session_n$STAGE.tgz"; }
# (Its output goes nowhere: a sleeping child left holding the pipe would hold the call open.)
( while sleep "${SNAP_S:-45}"; do snap periodic_snapshot.tgz; done ) >/dev/null 2>&1 & SNAPPER=$!
trap 'kill $SNAPPER 2>/dev/null; snap final_snapshot.tgz' EXIT
t0=$(date +%s); lap() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
# Never below 1: `timeout 0` means no limit at all (call X2, 2026-12-06, ran its reruns past CALL_S
# into the call's own limit that way, and its final snapshot came back empty).
left() { local s=$(( ${CALL_S:-560} - ($(date +%s) - t0) )); echo $(( s > 1 ? s : 1 )); }
KB="python3 -m pytest -p harness.pytest_plugin suites/kernelbench -q -p no:cacheprovider --device cuda --size full"
MKEVOLVE="$KB --generator mkevolve --provider builtin --compile-baseline off --timing-budget-ms 300 --resume"
MK="$MKEVOLVE --subset representative --runs-dir $R/mk"
mk() { lap "mkevolve, $(left) s left"; timeout $(left) $MK 2>&1 | grep -v "^\.\|^$" | tail -6; }
case $STAGE in
1)
  P="$KB --timing-budget-ms 500 --compile-baseline off --generator reference --subset starter"
  lap "reference, starter set"; timeout 230 $P --runs-dir $R/ref1 2>&1 | tail -2
  lap "reference again"; timeout 210 $P --runs-dir $R/ref2 2>&1 | tail -2
  lap "compare"; timeout $(( $(left) > 91 ? $(left) - 90 : 1 )) python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref2 --inductor results/runs/h200/*inductor.jsonl --do-bench > $R/compare.txt 2>&1
  tail -19 $R/compare.txt
  python3 - <<'PY'
import glob, json
for path in sorted(glob.glob("results/scratch/gpu/ref[12]/*.jsonl")):
    for line in open(path):
        r = json.loads(line)
        if r.get("type") == "record" and r.get("remarks"):
            print(path.split("/")[3], r["problem_id"], "|", "; ".join(r["remarks"]))
PY
  lap "timing probe"; timeout $(left) python3 bench/cuda_timing_probe.py --problem 'L1/95_*' --problem 'L2/23_*' --problem 'L1/47_*' > $R/probe.txt 2>&1
  cat $R/probe.txt | tail -5
  ;;
2) mk ;;
3)
  B="$KB --generator reference --compile-baseline on --timing-budget-ms 300 --runs-dir $R/base --resume"
  lap "baselines, $(left) s left"; timeout $(left) $B 2>&1 | grep -v "^\.\|^$" | tail -6
  python3 bench/phase_summary.py --runs $R/base
  ;;
5)
  lap "mkevolve rerun, $(left) s left"
  timeout $(left) $MKEVOLVE --runs-dir $R/mk2 \
    --problem 'L1/1_*' --problem 'L1/6_*' --problem 'L1/18_*' --problem 'L2/23_*' --problem 'L2/28_*' \
    --problem 'L2/33_*' --problem 'L3/1_*' --problem 'L3/5_*' --problem 'L3/20_*' 2>&1 | grep -v "^\.\|^$" | tail -6
  ;;
6)
  lap "mkevolve after the view and below_sol fixes, $(left) s left"
  timeout $(left) $MKEVOLVE --runs-dir $R/mk3 --problem 'L3/43_*' --problem 'L3/5_*' 2>&1 | grep -v "^\.\|^$" | tail -6
  ;;
7)
  # bench/cuda_timer_correction.py: the device-wide synchronize kept, its round trip taken out
  # (issue #2's do_bench criterion), about 90 s; prepared 2026-12-05, not yet run.
  lap "timer correction"; timeout $(left) python3 bench/cuda_timer_correction.py
  ;;
8)
  # PROBE_FIRST=1: the quick timing probe first (STAGE=15's, about 60 s), for issue #2 on an H200.
  [ -n "${PROBE_FIRST:-}" ] && { lap "timing probe"; timeout 120 python3 bench/cuda_timing_probe.py --quick \
    --problem 'L2/23_*' --problem 'L1/95_*' --problem 'L2/9_*' > $R/probe8.txt 2>&1; tail -4 $R/probe8.txt; }
  # The Level 3 baselines still missing (L3/37-42, 44-50 after call X2), resumable, with the corrected
  # CUDA timer (a run file of another timer refuses the resume), under $R/base2; then, in a second
  # resumable run under $R/base3, the problems whose compile failed in the sandbox before the compile
  # pool (L3/7, 9, 10, 14-16, 18-20, 22-30) and whose reference speedup was outside 0.9-1.1 (L1/12,
  # 71, 78 again, L3/35, 36). Copy $R/base2 into results/runs/h200/corrected_timer/ and $R/base3 into
  # results/runs/h200/corrected_timer_rerun/ afterwards.
  B="$KB --generator reference --compile-baseline on --timing-budget-ms 300 --resume"
  lap "Level 3 baselines, $(left) s left"
  timeout $(left) $B --runs-dir $R/base2 --problem 'L3/3[7-9]_*' --problem 'L3/4[0-24-9]_*' \
    --problem 'L3/50_*' 2>&1 | grep -v "^\.\|^$" | tail -4
  lap "reruns, $(left) s left"
  timeout $(left) $B --runs-dir $R/base3 --problem 'L3/7_*' --problem 'L3/9_*' --problem 'L3/1[04-689]_*' \
    --problem 'L3/2[02-9]_*' --problem 'L3/3[056]_*' --problem 'L1/12_*' --problem 'L1/7[18]_*' 2>&1 | grep -v "^\.\|^$" | tail -4
  python3 bench/phase_summary.py --runs $R/base2 | head -8
  ;;
9)
  # The corrected timer on the starter set: `reference` twice, do_bench in the same call (about
  # 150 s a run on an H100), then the GPU cases of the exploit corpus with what time is left (a fresh
  # machine compiles their Triton kernels anew: 150 s was too short on call W1).
  P="$KB --timing-budget-ms 500 --compile-baseline off --generator reference --subset starter"
  lap "reference, starter set"; timeout 220 $P --runs-dir $R/ref1 2>&1 | tail -1
  lap "reference again"; timeout 220 $P --runs-dir $R/ref2 2>&1 | tail -1
  lap "do_bench"; timeout 60 python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref2 --do-bench 2>&1 | tail -17
  lap "exploit corpus, $(left) s left"
  timeout $(left) python3 -m pytest tests/exploits/test_corpus.py -m gpu -q -p no:cacheprovider 2>&1 | tail -3
  ;;
10)
  # Any GPU: the peaks cold (one round straight after start-up) and by the method of _PEAK_METHOD 3
  # (the GPU kept busy first, best of three rounds), then the reference generator on L1/19 (ReLU, at
  # the bandwidth peak, flagged below_sol on a cold H100 measurement), then STAGE=1's comparison with
  # do_bench over whatever ref1/ref2 runs lie under $R (carried in when an earlier call measured them).
  lap "peaks"; python3 bench/peak_probe.py
  lap "L1/19 reference"; timeout 120 $KB --timing-budget-ms 500 --compile-baseline off --generator reference \
    --problem 'L1/19_*' --runs-dir $R/relu 2>&1 | tail -1
  python3 -c "
import glob, json
for l in open(glob.glob('$R/relu/*.jsonl')[0]):
    r = json.loads(l)
    if r.get('type') == 'record': print(r['problem_id'], 'eager', r['eager_ms'], 'sol', r['sol_ms'], r['flags'], r['remarks'])"
  if [ -n "$(ls $R/ref1 2>/dev/null)" ] && [ -n "$(ls $R/ref2 2>/dev/null)" ]; then
    lap "compare"; timeout $(left) python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref2 --do-bench 2>&1 | tail -22
  fi
  ;;
11)
  # Any GPU: the starter set with `reference` once, then do_bench on the same machine in the same call
  # (issue #2's "eager medians within 5% of do_bench", with the corrected timer and method-3 peaks).
  P="$KB --timing-budget-ms 500 --compile-baseline off --generator reference --subset starter"
  lap "reference, starter set"; timeout 260 $P --runs-dir $R/ref3 2>&1 | tail -1
  lap "do_bench"; timeout $(left) python3 bench/gpu_compare.py --first $R/ref3 --second $R/ref3 --do-bench 2>&1 | tail -17
  ;;
12)
  # Any GPU: the compile baseline on whole Level 3 networks with inductor's compile pool given back to
  # the harness's own code (guards.Guards.protect, compile_pool; 2026-12-06). PROBLEMS (default L3/19
  # and L3/16, both failed in the sandbox on call V1) run in a new run under $R/cc; each record's
  # eager and compile medians, the baseline errors and the seconds of the compile session print last.
  B="$KB --generator reference --compile-baseline on --timing-budget-ms 300 --runs-dir $R/cc --resume"
  for p in ${PROBLEMS:-L3/19_* L3/16_*}; do B="$B --problem $p"; done
  lap "compile check, $(left) s left"; timeout $(left) $B 2>&1 | grep -v "^\.\|^$" | tail -3
  python3 - <<'PY'
import glob
from harness.results import load_records
for r in load_records(glob.glob("results/scratch/gpu/cc/*.jsonl")):
    print(r["problem_id"], r["status"], "eager", r.get("eager_ms"), "compile", r.get("compile_ms"),
          "compile session s", (r.get("phases_s") or {}).get("compile"), (r.get("baseline_errors") or {}).get("compile", "")[:300])
PY
  ;;
13)
  # Any GPU: does reading one element a page of each call's fresh inputs (outside the window) take
  # away the few percent by which the protocol sits above do_bench on L2/23 (6.6% on the H200, X2)?
  # bench/cuda_timing_probe.py's protocol+rotate+touch against protocol+rotate, about 2 min.
  lap "timing probe"; timeout $(left) python3 bench/cuda_timing_probe.py --problem 'L2/23_*' --problem 'L1/95_*' \
    --problem 'L2/9_*' 2>&1 | tail -4
  ;;
14)
  # Any GPU: written for a worker that read its inputs' pages after the flush (timer
  # cuda_events+device_sync-round_trip_floor+input_pages_touched; call Y1, 2026-12-06, on an H100;
  # taken out again after the probe: docs/HARNESS.md). With today's worker it measures the corrected
  # timer. The probe's rotate
  # variants with and without the touch first (about 40 s), then the starter set with `reference`,
  # do_bench, `reference` again (issue #2's three checks), then `inductor` on the starter set with
  # what time is left (a new run under $R/ind).
  # (PROBE=1: the quick probe first, once a machine: a second call on it skips to the runs. Off by
  # default: the runs alone take about 550 s.)
  [ -n "${PROBE:-}" ] && [ ! -f $R/probe17.txt ] && { lap "timing probe"; timeout 120 python3 bench/cuda_timing_probe.py --quick --problem 'L2/23_*' \
    --problem 'L1/95_*' --problem 'L2/9_*' > $R/probe17.txt 2>&1; tail -4 $R/probe17.txt; }
  P="$KB --timing-budget-ms 500 --compile-baseline off --subset starter"
  # do_bench right after the first run, so a call cut short still has the comparison with do_bench.
  lap "reference, starter set"; timeout 190 $P --generator reference --runs-dir $R/ref1 2>&1 | tail -1
  lap "do_bench"; timeout 70 python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref1 --do-bench 2>&1 | tail -17
  lap "reference again, $(left) s left"; timeout $(left) $P --generator reference --runs-dir $R/ref2 2>&1 | tail -1
  lap "twice"; timeout 30 python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref2 2>&1 | tail -17
  lap "inductor, $(left) s left"; timeout $(left) $P --generator inductor --runs-dir $R/ind --resume 2>&1 | tail -1
  ;;
15)
  # Any GPU (2026-12-07 prepared): the quick probe with do_bench's own 256 MiB flush and the queued
  # spin beside the worker's protocol (is L2/23's gap over do_bench launch latency left exposed when
  # the flush ends before the host has launched the call?), then the starter set with `reference`
  # and do_bench in the same call, as STAGE=11.
  lap "timing probe"; timeout 150 python3 bench/cuda_timing_probe.py --quick --problem 'L2/23_*' --problem 'L1/95_*' \
    --problem 'L2/9_*' --problem 'L1/47_*' > $R/probe15.txt 2>&1; tail -6 $R/probe15.txt
  P="$KB --timing-budget-ms 500 --compile-baseline off --generator reference --subset starter"
  lap "reference, starter set, $(left) s left"; timeout $(( $(left) > 80 ? $(left) - 70 : 1 )) $P --runs-dir $R/ref4 2>&1 | tail -1
  lap "do_bench"; timeout $(left) python3 bench/gpu_compare.py --first $R/ref4 --second $R/ref4 --do-bench 2>&1 | tail -17
  ;;
17)
  # An H200 (2026-12-07): issue #2's starter-set checks with today's harness, every run resumable so
  # that a second call on the same warm machine finishes what the first did not reach: `inductor`
  # (ind; never run on an H200 with the corrected timer), `reference` (ref1) and do_bench, then
  # `reference` again (ref2), then one table of all. A fresh machine resumes from what earlier calls
  # returned, once copied to results/runs/h200/starter_2026-12-07/ (ind, ref1, ref2, do_bench*.txt).
  S=results/runs/h200/starter_2026-12-07
  for part in ind ref1 ref2; do [ -n "$(ls $S/$part 2>/dev/null)" ] && seed $R/$part "$S/$part/*"; done
  for f in do_bench.txt do_bench_ind.txt; do [ -f $S/$f ] && [ ! -f $R/$f ] && cp $S/$f $R/; done
  # (PROBE=1: the quick probe first, once a machine: a second call on it skips to the runs. Off by
  # default: the runs alone take about 550 s.)
  [ -n "${PROBE:-}" ] && [ ! -f $R/probe17.txt ] && { lap "timing probe"; timeout 120 python3 bench/cuda_timing_probe.py --quick --problem 'L2/23_*' \
    --problem 'L1/95_*' --problem 'L2/9_*' > $R/probe17.txt 2>&1; tail -4 $R/probe17.txt; }
  P="$KB --timing-budget-ms 500 --compile-baseline off --subset starter --resume"
  # (IND_FIRST=1, session 24, for a last call too short for all: `inductor` first, then do_bench
  # against the eager medians its own records carry, timed in the same run the same way, then the
  # `reference` runs as the time allows.)
  ind() { lap "inductor, $(left) s left"; timeout $(left) $P --generator inductor --runs-dir $R/ind 2>&1 | tail -1; }
  # (A second call on the warm machine keeps a whole do_bench table: only a finished one ends with
  # the summary line.)
  [ -z "${IND_FIRST:-}" ] || { ind; grep -q "^eager vs do_bench" $R/do_bench_ind.txt 2>/dev/null || {
    lap "do_bench against inductor's eager medians"; timeout $(( $(left) > 90 ? 90 : $(left) )) python3 bench/gpu_compare.py --first $R/ind --second $R/ind --do-bench > $R/do_bench_ind.txt 2>&1; tail -17 $R/do_bench_ind.txt; }; }
  # (Session 23: the two `reference` runs and do_bench first, about 320 s, then inductor, whose
  # compiles take longest; a second call on the warm machine finishes what is left.)
  lap "reference, starter set, $(left) s left"; timeout $(left) $P --generator reference --runs-dir $R/ref1 2>&1 | tail -1
  grep -q "within 0.9-1.1: [0-9]*/14$" $R/do_bench.txt 2>/dev/null || { lap "do_bench"; timeout 70 python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref1 --do-bench > $R/do_bench.txt 2>&1; tail -17 $R/do_bench.txt; }
  # (REF2_LAST=1: inductor before the second `reference` run, for a call too short for both.)
  ref2() { lap "reference again, $(left) s left"; timeout $(left) $P --generator reference --runs-dir $R/ref2 2>&1 | tail -1; }
  [ -n "${REF2_LAST:-}" ] || ref2
  [ -n "${IND_FIRST:-}" ] || ind
  [ -z "${REF2_LAST:-}" ] || ref2
  R2=$R/ref2; [ -n "$(ls $R2 2>/dev/null)" ] || R2=$R/ref1   # (no second run yet: the repeat column is then 0)
  lap "all, $(left) s left"; timeout $(left) python3 bench/gpu_compare.py --first $R/ref1 --second $R2 --inductor $R/ind/*.jsonl 2>&1 | tail -20
  # (What time is left, once a machine: the harness's own overhead per evaluation with today's
  # worker, the hold included; last measured on an H200 on 2026-12-01.)
  [ -f $R/overhead.txt ] || [ "$(left)" -lt 45 ] || { lap "overhead, $(left) s left"
    # (Kept only when it finished, so that a call cut short leaves it to the next.)
    timeout $(left) python3 bench/harness_overhead.py --device cuda --repeats 3 > $R/overhead.part 2>&1 && mv $R/overhead.part $R/overhead.txt
    tail -6 $R/overhead.txt $R/overhead.part 2>/dev/null; }
  ;;
20)
  # Any GPU, short (2026-12-07; the hold's first run in the harness, call BB3, when it was still
  # switched on by the caller with CRUCIBLE_CUDA_HOLD=1): `reference` on the starter set and do_bench against its eager medians, then the
  # hold's GPU tests (exclusivity, and the launch-hook cheat flagged while an honest matmul is not).
  P="$KB --timing-budget-ms 500 --compile-baseline off --subset starter --resume"
  lap "reference, starter set, $(left) s left"; timeout $(left) $P --generator reference --runs-dir $R/ref1 2>&1 | tail -1
  lap "do_bench"; timeout $(left) python3 bench/gpu_compare.py --first $R/ref1 --second $R/ref1 --do-bench > $R/do_bench.txt 2>&1; tail -17 $R/do_bench.txt
  # (HOLD_TESTS_RAN=1: the caller ran them first, to decide whether to switch the hold on.)
  [ -n "${HOLD_TESTS_RAN:-}" ] || { lap "the hold's GPU tests, $(left) s left"
    timeout $(left) python3 -m pytest tests/core/test_hold.py -m gpu -q -rA -p no:cacheprovider 2>&1 | tail -4; }
  ;;
18)
  # Any GPU: the GPU cases of the exploit corpus with today's harness (not rerun since call X2).
  lap "exploit corpus, $(left) s left"
  timeout $(left) python3 -m pytest tests/exploits/test_corpus.py -m gpu -q -p no:cacheprovider 2>&1 | tail -4
  ;;
4)
  lap "matmul precision"; python3 bench/matmul_precision_probe.py
  python3 bench/matmul_precision_probe.py --n 2048 --k 8192 --variant default | tail -3
  ;;
16)
  # Any GPU: `inductor` on the starter problems call Z5 (2026-12-06, an H100) did not reach before its
  # end, in a new run under $R/ind2 (a fresh machine has no $R/ind to resume).
  P="$KB --timing-budget-ms 500 --compile-baseline off --generator inductor"
  lap "inductor, $(left) s left"; timeout $(left) $P --runs-dir $R/ind2 --problem 'L2/23_*' --problem 'L2/40_*' \
    --problem 'L3/1_*' --problem 'L3/43_*' 2>&1 | tail -2
  ;;
esac
lap "done"
