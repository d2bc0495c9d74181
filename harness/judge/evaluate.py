"""One evaluation: a candidate judged against a problem, baselines timed the same way, one record out.

``evaluate`` never raises for anything the candidate does: every failure is a verdict.
"""

from __future__ import annotations

import random
import time
import traceback
from contextlib import nullcontext
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from harness.judge import checks

from harness.problems import seeds

from harness.judge import sol

from harness.records import stats
from harness.judge.alternation import CANDIDATE
from harness.judge.baseline_workers import CONTROL, BaselineWorkers, baseline_options, baseline_source
from harness.judge.gpu_lock import gpu_work, holding, timing_window
from harness.judge.workers import READY_TIMEOUT_S, WorkerFailure, WorkerLimits, WorkerSession, settle_spare_workers
from harness.problems.problem import Problem
from harness.judge.reference import ReferenceEnv, clone_inputs, inputs_equal, second_look
from harness.records.results import utc_now
from harness.judge.timing import LARGE_SET_BYTES, TimingPlan, release_cache, run_alternating

# A measured time this far under the speed-of-light floor is impossible even allowing for error in
# the measured peaks (a kernel can beat a measured copy bandwidth by a few percent, not by 10%).
BELOW_SOL_SLACK = 1.1
DEGENERACY_TRIALS = 3
SPEED_NOT_MEASURED_CPU = "speed_not_measured: Triton kernels ran in the CPU interpreter"
MIN_ALLOWED_OVERHEAD_MS = 0.25   # the CPU worker's own per-call cost (fingerprint, bookkeeping) is about this


@dataclass
class EvalOptions:
    device: str = "cpu"
    precision: str = "fp32"
    size: str = "small"
    timing: bool = True
    trials: int = 5
    tolerance: float | None = None
    allow_tf32: bool = False
    compile_baseline: str = "auto"          # auto: on for CUDA, off on the CPU (inductor's C++ builds are slow)
    limits: WorkerLimits = field(default_factory=WorkerLimits)
    plan: TimingPlan = field(default_factory=TimingPlan)
    secret: int | None = None
    gpu_index: int | None = None
    timing_control: bool = False            # a second eager worker in the rounds: the timer's A/A check

    def with_compile(self) -> bool:
        return self.compile_baseline == "on" or (self.compile_baseline == "auto" and self.device == "cuda")

    def tol(self) -> float:
        from harness.judge.precision import tolerance

        return tolerance(self.precision, self.tolerance)


class EvalCache:
    """Per-run state shared across evaluations: the secret, reference envs, baselines, probes."""

    def __init__(self, secret: int | None = None):
        self.secret = secret if secret is not None else seeds.new_secret()
        self.envs: dict[tuple, ReferenceEnv] = {}
        self.baselines = BaselineWorkers()   # the problem's eager and compile workers, kept across its candidates
        self.degenerate: dict[tuple, list[str]] = {}
        self._peaks: dict[str, dict] = {}

    def env(self, problem: Problem, opts: EvalOptions) -> ReferenceEnv:
        key = (problem.id, problem.source_sha, opts.device, opts.precision)
        if key not in self.envs:
            self.release()  # one problem's reference at a time: full-size models are large
            if opts.device == "cpu":
                _judge_cpu_threads()
            self.envs[key] = ReferenceEnv(problem, opts.device, opts.precision, self.secret, opts.allow_tf32)
        return self.envs[key]

    def release(self) -> None:
        """Drop the reference models and hand cached GPU memory back, so that the next problem (or
        another process sharing the GPU) finds it free."""
        had_cuda = any(key[2] == "cuda" for key in self.envs)
        self.baselines.close()
        self.envs.clear()
        if had_cuda:
            import gc

            import torch

            gc.collect()
            torch.cuda.empty_cache()

    def peaks(self, device: str) -> dict:
        if device not in self._peaks:
            from harness.judge.device import peaks

            self._peaks[device] = peaks(device)
        return self._peaks[device]


def _judge_cpu_threads() -> None:
    """The judge's own tensor work on the CPU (comparisons, poisoning, fresh inputs) runs with the
    workers' thread count. With PyTorch's default of one spinning thread per core beside the workers
    and a second judge (xdist) on a 2-core machine, comparing a 1 MB output took 0.4 s instead of
    2-17 ms, and checks, not timed calls, were most of an evaluation's wall time."""
    import torch

    from harness.judge.device import worker_cpu_threads

    if torch.get_num_threads() != worker_cpu_threads():
        torch.set_num_threads(worker_cpu_threads())


def evaluate(problem: Problem, source: str, opts: EvalOptions, cache: EvalCache | None = None, *,
             identity: dict | None = None, baseline: bool = False, profile: bool = False) -> dict:
    """Judge ``source`` on ``problem``; return a result record (see docs/INTERFACES.md §5)."""
    cache = cache or EvalCache(opts.secret)
    started = time.perf_counter()
    record = _skeleton(problem, source, opts, identity or {})
    if not source.strip():
        record.update(status="rejected", reason=(identity or {}).get("stopped") or "the generator produced no source")
        return _finish(record, started)
    record["flags"] += _static_flags(source)
    # On a GPU that is timed on, this process holds it shared while it works there and exclusively
    # while it times (harness.judge.gpu_lock); a run without timing takes no lock and may share it.
    locked = opts.device == "cuda" and opts.timing
    outermost = locked and not holding(opts.device, opts.gpu_index)
    with gpu_work(opts.device, opts.gpu_index) if locked else nullcontext():
        env_started = time.perf_counter()
        env = cache.env(problem, opts)
        record["phases_s"] = {"reference": round(time.perf_counter() - env_started, 3)}
        verdict = judge_candidate(env, source, opts, cache, timing=opts.timing, profile=profile, trusted=baseline)
        if outermost:  # a spare still starting (its CUDA context) is this process's GPU work too
            settle_spare_workers()
    record["phases_s"]["candidate"] = verdict.pop("phases_s")
    if verdict.get("gpu_windows"):
        record["gpu_windows"] = verdict.pop("gpu_windows")
    record.update({k: v for k, v in verdict.items() if k not in ("timing", "overheads", "baseline_failures")})
    if verdict["status"] == "ok" and verdict.get("timing") is not None:
        _add_speed(record, verdict, problem, env, opts, cache, baseline)
    _add_integrity_flags(record, verdict, cache, problem, opts, baseline)
    return _finish(record, started)


def judge_failure_record(problem: Problem, source: str, opts: EvalOptions, identity: dict, error: BaseException) -> dict:
    """A record for a failure on the judge's side (not the candidate's): status ``harness_error``.

    The usual cause is memory: the judge holds the inputs, a pristine copy and the expected outputs
    of a full-size problem on the same GPU as the worker.
    """
    record = _skeleton(problem, source, opts, identity)
    name = type(error).__name__
    text = str(error).splitlines()[0][:400] if str(error) else ""
    if name == "OutOfMemoryError" or "out of memory" in text.lower():
        advice = ("the judge ran out of memory computing the reference's side of this problem; "
                  "run it at --size small, or on a device with more free memory")
    else:
        advice = "a bug in Crucible's judge, please report it with this record's traceback"
    record.update(status="harness_error", reason=f"{advice}: {name}: {text}",
                  traceback="".join(traceback.format_exception(type(error), error, error.__traceback__))[-4000:])
    return _finish(record, time.perf_counter())


def _skeleton(problem: Problem, source: str, opts: EvalOptions, identity: dict) -> dict:
    from harness.candidate import Candidate

    return {
        "problem_id": problem.id, "suite": problem.suite, "level": problem.level, "problem": problem.name,
        "generator": identity.get("generator", "unknown"), "provider": identity.get("provider"),
        "model": identity.get("model"), "attempt": identity.get("attempt", 0),
        "candidate_sha": Candidate(source).sha, "status": None, "correct": False, "reason": "",
        "flags": [], "remarks": [], "device": opts.device, "precision": opts.precision, "size": opts.size,
        "candidate_ms": None, "eager_ms": None, "compile_ms": None, "speedup": None, "speedup_compile": None,
        "speedup_ci": None, "speedup_compile_ci": None, "speed_verdict": None, "speed_verdict_compile": None,
        "flops": None, "conv_flops": None, "bytes": None, "sol_ms": None, "sol_fraction": None,
        "flag_floor_ms": None, "excluded": problem.exclude,
        "candidate_source": source,
    }


def _finish(record: dict, started: float) -> dict:
    record["correct"] = record["status"] == "ok"
    record["time"] = utc_now()
    record["elapsed_s"] = round(time.perf_counter() - started, 3)
    return record


def _static_flags(source: str) -> list[str]:
    try:
        from harness.judge.static import scan
    except ImportError:
        return []
    return scan(source)


class Laps:
    """Seconds spent in each phase of one worker session (the record's ``phases_s``): where an
    evaluation's wall time goes, so that a slow run can be told apart from a slow harness."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.seconds[phase] = round(self.seconds.get(phase, 0.0) + now - self._last, 3)
        self._last = now


def judge_candidate(env: ReferenceEnv, source: str, opts: EvalOptions, cache: EvalCache, *, timing: bool,
                    trials: int | None = None, profile: bool = False, trusted: bool = False,
                    spares_ahead: int = 1) -> dict:
    """Run the candidate in a fresh worker: load, correctness trials, timing. Returns a verdict dict
    with the seconds each phase took under ``phases_s``. ``spares_ahead``: how many workers a
    trusted session starts for the sessions after it (judge.WorkerSession)."""
    rng = random.Random(seeds.mixed(7, cache.secret, "sample"))
    laps = Laps()
    if timing and (opts.device == "cuda" or "triton" not in source):
        # Started before the candidate's worker, so that all of them start up together; on the CPU
        # only where the candidate will be timed (Triton kernels in the interpreter are not).
        cache.baselines.start(env, baseline_kinds(opts), opts)
        spares_ahead = max(spares_ahead, 1 + len(baseline_kinds(opts)))
    with WorkerSession(opts.device, opts.limits, opts.gpu_index, trusted=trusted, spares_ahead=spares_ahead) as session:
        laps.lap("spawn" if not session.adopted_spare else "adopt")
        try:
            session.wait_ready(max(opts.limits.load_s, READY_TIMEOUT_S), "load")
            laps.lap("ready")
            verdict = _judge_in(session, env, source, opts, cache, timing, trials or opts.trials, profile, rng,
                                trusted, laps)
        except WorkerFailure as failure:
            verdict = {"status": failure.status, "reason": failure.reason, "worker_output": session.output_tail()}
            laps.lap("until_failure")
    laps.lap("close")  # the worker's exit and, after a trusted session, the next spare's start-up
    verdict["phases_s"] = laps.seconds
    return verdict


def _judge_in(session, env, source, opts, cache, timing, trials, profile, rng, trusted, laps: Laps) -> dict:
    load = session.request({"op": "load", "source": source, "init_args": env.init_args, "init_seed": env.init_seed,
                            "state_dict": env.state_dict(), "device": opts.device, "precision": opts.precision,
                            "flags": env.flags, "gpu_index": opts.gpu_index, "trusted": trusted},
                           opts.limits.load_s, "load")
    if not load.get("ok"):
        return _failed(load, session)
    laps.lap("load")
    verdict: dict[str, Any] = {"status": "ok", "weights_loaded": f"{load['weights_loaded']}/{load['weights_total']}"}
    if load.get("sync_floor_ms") is not None:
        verdict["sync_floor_ms"] = load["sync_floor_ms"]  # taken out of each CUDA window (runner.CUDA_TIMER)
    if load.get("hold") is not None:
        verdict["hold"] = load["hold"]  # the SM-filling hold before each window (harness.judge.worker.hold)
    elif load.get("hold_error"):  # asked for (the default on CUDA) and not built
        verdict["hold"] = None
        verdict.setdefault("remarks", []).append(f"no_hold: each timed window opened on an idle GPU ({load['hold_error']})")
    failure = _correctness(session, env, opts, cache, trials, verdict)
    laps.lap("correctness")
    if failure:
        return failure
    launches = verdict["triton_launches"]
    if timing and opts.device == "cpu" and launches:
        verdict.setdefault("remarks", []).append(SPEED_NOT_MEASURED_CPU)
    elif timing:
        failure = _time_in_alternation(session, env, opts, cache, rng, trusted, verdict, laps)
        if failure:
            return failure
    if opts.device == "cuda" and not launches and not trusted:
        profile = True  # load_inline kernels are only visible in the profile's kernel names
    if profile:
        reply = session.request({"op": "profile", "inputs": env.make_inputs(env.timing_seed(999_999))},
                                opts.limits.timing_batch_s, "profile")
        verdict["profile"] = reply.get("profile", [])
        laps.lap("profile")
    return verdict


def baseline_kinds(opts: EvalOptions) -> list[str]:
    """The baselines timed with the candidate; ``eager_control``, a second eager worker, where the
    timing control is on (an A/A check of the timer, harness.judge.baseline_workers.CONTROL)."""
    return ["eager"] + (["compile"] if opts.with_compile() else []) + ([CONTROL] if opts.timing_control else [])


def _time_in_alternation(session, env, opts, cache, rng, trusted, verdict, laps: Laps) -> dict | None:
    """Time the candidate in alternation with the problem's baselines (harness.judge.alternation); the
    baselines' workers are started, loaded and checked once per problem (BaselineWorkers)."""
    ready = cache.baselines.ready(env, baseline_kinds(opts), opts, lambda worker, kind: _check_baseline(worker, kind, env, opts, cache))
    laps.lap("baselines")
    settle_spare_workers()
    laps.lap("settle")  # spare workers still starting: none may start beside a timing
    from harness.judge.placement import timing_cpus

    windows: list = []
    with timing_window(opts.device, opts.gpu_index, windows):
        laps.lap("gpu_wait")  # another process timing on this GPU
        alternation = run_alternating({CANDIDATE: session, **ready}, env, opts.plan, opts.tol(), rng,
                                      opts.limits.timing_batch_s, paused=set() if trusted else {CANDIDATE},
                                      cpus=timing_cpus(opts.device, opts.gpu_index))
    laps.lap("timing")
    if windows:
        verdict["gpu_windows"] = windows
    if alternation.outcomes[CANDIDATE].failure:
        status, reason = alternation.outcomes[CANDIDATE].failure
        return {"status": status, "reason": reason, "worker_output": session.output_tail()}
    failures = cache.baselines.failures_for(baseline_kinds(opts))
    for kind, (status, reason) in alternation.rounds.failed.items():
        # Its worker may be in any state: closed, and a new one for the problem's next candidate.
        failures[kind] = cache.baselines.drop(kind, status, reason, remember=False)
    verdict["timing"] = alternation
    verdict["baseline_failures"] = failures
    return None


def _check_baseline(worker: WorkerSession, kind: str, env, opts: EvalOptions, cache: EvalCache) -> dict:
    """Load a baseline in its worker and check it once, like a candidate: its verdict (``ok`` or why
    not), with the seconds each phase took under ``phases_s``."""
    opts = baseline_options(opts, kind)
    laps = Laps()
    try:
        worker.wait_ready(max(opts.limits.load_s, READY_TIMEOUT_S), "load")
        laps.lap("ready")
        verdict = _judge_in(worker, env, baseline_source(env.problem, kind), opts, cache, False, 1, False,
                            random.Random(0), True, laps)
    except WorkerFailure as failure:
        verdict = {"status": failure.status, "reason": failure.reason, "worker_output": worker.output_tail()}
    verdict["phases_s"] = laps.seconds
    return verdict


def _failed(reply: dict, session) -> dict:
    return {"status": reply.get("kind", "runtime_error"), "reason": reply.get("message", ""),
            "traceback": reply.get("traceback"), "worker_output": session.output_tail()}


def _correctness(session, env: ReferenceEnv, opts: EvalOptions, cache: EvalCache, trials: int, verdict: dict):
    tol = opts.tol()
    key = (env.problem.id, env.problem.source_sha, opts.precision)
    probe = None if key in cache.degenerate else checks.DegeneracyProbe(tol, tol)
    worst = checks.CheckResult(True)
    reply: dict = {}
    rechecked: dict = {}  # trials that passed only against the float64 result (reference.second_look)
    for trial in range(trials):
        inputs = env.make_inputs(env.trial_seed(trial))
        expected = env.expected(inputs)
        pristine = clone_inputs(inputs)
        phase, limit = ("first call", opts.limits.first_call_s) if trial == 0 else ("correctness", opts.limits.call_s)
        output_bytes = sum(t.numel() * t.element_size() for t in expected)
        poison = 2 * output_bytes
        if trial == 0 or output_bytes >= LARGE_SET_BYTES:
            release_cache(opts.device)  # the judge's cached blocks are memory the worker cannot have (CUDA only)
        reply = session.request({"op": "call", "inputs": inputs, "poison_bytes": poison}, limit, phase)
        if not reply.get("ok"):
            return _failed(reply, session)
        received = list(reply["outputs"])
        result = second_look(env, pristine, expected, received, tol, checks.compare_outputs(expected, received, tol, tol),
                             rechecked)
        if not result.ok:
            return {"status": "incorrect", "reason": f"trial {trial}: {result.reason}",
                    "checks": {"trials": trial, "mismatch": [result.reason] + result.details}}
        if not inputs_equal(inputs, pristine):
            return {"status": "incorrect", "reason": f"trial {trial}: input_mutated: the candidate changed its inputs",
                    "checks": {"trials": trial}}
        worst.max_abs_err = max(worst.max_abs_err, result.max_abs_err)
        worst.max_rel_err = max(worst.max_rel_err, result.max_rel_err)
        if probe is not None and trial < DEGENERACY_TRIALS:
            probe.update(expected, pristine)
        del inputs, expected, pristine, reply["outputs"]
    if probe is not None:
        cache.degenerate[key] = probe.found()
    env.drop_exact()
    summary = {"trials": trials, "max_abs_err": worst.max_abs_err, "max_rel_err": worst.max_rel_err}
    if rechecked.get("passed"):
        summary["float64_recheck"] = {"trials": rechecked["passed"], "reference_error": rechecked["reference_error"],
                                      "max_abs_err": rechecked["max_abs_err"]}
        verdict.setdefault("remarks", []).append(_recheck_remark(f"{rechecked['passed']} of {trials} trial(s)", rechecked))
    verdict.update(checks=summary,
                   triton_launches=reply.get("triton_launches", 0), patched=reply.get("patched", []),
                   new_threads=reply.get("new_threads", 0))
    return None


def _recheck_remark(what: str, tally: dict) -> str:
    return (f"float64_recheck: {what} missed the tolerance against the float32 reference and passed against the "
            f"float64 result, allowed the reference's own largest error {tally['reference_error']:.3g} "
            f"(the candidate's largest error there: {tally['max_abs_err']:.3g})")


def _add_speed(record, verdict, problem, env, opts, cache, is_baseline) -> None:
    alternation = verdict["timing"]
    timing = alternation.outcomes[CANDIDATE]
    summary = timing.summary()
    if summary is None:
        return
    record.update(candidate_ms=summary.median_ms, candidate_ms_iqr=summary.iqr_ms,
                  candidate_ms_ci=[summary.ci_low_ms, summary.ci_high_ms], candidate_n=summary.n,
                  timed_input_sets=timing.sets, timed_outputs_checked=timing.checked)
    _note_mallocs(record, "candidate", timing.calls_with_malloc, summary.n, timing.calls_with_retry)
    rechecked = timing.rechecked
    if rechecked.get("passed"):
        record["remarks"].append(_recheck_remark(f"{rechecked['passed']} checked timed output(s)", rechecked))
    rounds = alternation.rounds
    record.update(speedup_n=rounds.rounds, speed_stop=rounds.stopped, timing_cpus=alternation.cpus)
    failures = verdict.get("baseline_failures", {})
    for kind in baseline_kinds(opts):
        spent = cache.baselines.take_phases(kind)
        if spent is not None:
            record.setdefault("phases_s", {})[kind] = spent
        if kind in failures:
            _note_failed_baseline(record, kind, failures[kind])
        elif kind == CONTROL and kind in rounds.stats:
            _add_control(record, rounds)
        elif kind in rounds.stats:
            _add_baseline(record, kind, alternation.outcomes[kind], rounds.stats[kind])
    _add_sol(record, env, opts, cache)


def _add_baseline(record: dict, kind: str, outcome, ratio: stats.RatioStats) -> None:
    """A baseline's own times, and the speedup over it: the median of the rounds' ratios, its
    bootstrap interval and what the interval says (faster, slower or indistinguishable)."""
    base = outcome.summary()
    suffix = "" if kind == "eager" else f"_{kind}"
    record.update({f"{kind}_ms": base.median_ms, f"{kind}_ms_iqr": base.iqr_ms,
                   f"{kind}_ms_ci": [base.ci_low_ms, base.ci_high_ms], f"{kind}_n": base.n,
                   f"speedup{suffix}": ratio.median, f"speedup{suffix}_ci": [ratio.ci_low, ratio.ci_high],
                   f"speed_verdict{suffix}": stats.speed_verdict((ratio.ci_low, ratio.ci_high))})
    _note_mallocs(record, kind, outcome.calls_with_malloc, base.n, outcome.calls_with_retry)
    if outcome.patched:
        # The baseline runs the harness's own code: a timer finding in its worker means something
        # disturbed it while it was timed, and a speedup over a disturbed baseline proves nothing.
        record["flags"].append("baseline_disturbed")
        record["remarks"].append(f"baseline_disturbed: {kind}: {', '.join(outcome.patched)[:200]}")


def _add_control(record: dict, rounds) -> None:
    """The A/A check: the same eager code in two workers, timed in the same rounds. Their ratio
    should be 1; where its interval excludes 1, every speedup of this problem carries that much
    bias from the processes themselves (where they landed, what each compiled), and a remark says so."""
    if "eager" not in rounds.stats:
        return
    same = stats.ratio_stats([e / c for e, c in zip(rounds.ratios["eager"], rounds.ratios[CONTROL])])
    record.update(control_ratio=same.median, control_ratio_ci=[same.ci_low, same.ci_high])
    if stats.speed_verdict((same.ci_low, same.ci_high)) != stats.INDISTINGUISHABLE:
        record["remarks"].append(f"process_bias: two eager workers of the same code disagree by "
                                 f"{100 * (same.median - 1):+.1f}% (interval {same.ci_low:.3f}-{same.ci_high:.3f})")


def _note_failed_baseline(record: dict, kind: str, failure: dict) -> None:
    record["remarks"].append(f"{kind}_baseline_failed: {failure['status']}: {failure['reason'][:200]}")
    # The remark's 200 characters name the error; what caused it (an inductor subprocess's
    # traceback, say) is at the end of the reason, kept whole enough to diagnose from the record.
    record.setdefault("baseline_errors", {})[kind] = _bounded_reason(failure["reason"], failure.get("worker_output"),
                                                                    failure.get("traceback"))


def _add_sol(record, env, opts, cache) -> None:
    record["flops"], record["conv_flops"], record["bytes"] = env.flops, env.conv_flops, env.nbytes
    peaks = cache.peaks(opts.device)
    raised = sol.raised_to_achieved(peaks, max(0, (env.flops or 0) - (env.conv_flops or 0)), env.nbytes or 0,
                                    record.get("eager_ms"), opts.precision)
    if raised != peaks:
        measured_floor = sol.flag_floor_ms(env.flops or 0, env.conv_flops or 0, env.nbytes or 0, peaks, opts.precision)
        record["remarks"].append(f"peaks_raised: eager ran at {record['eager_ms']:.4g} ms, under the floor of the "
                                 f"measured peaks ({measured_floor:.4g} ms); this record's floors use the rates "
                                 "eager achieved")
        peaks = raised
    record["sol_ms"] = sol.sol_ms(env.flops or 0, env.nbytes or 0, peaks, opts.precision)
    record["flag_floor_ms"] = sol.flag_floor_ms(env.flops or 0, env.conv_flops or 0, env.nbytes or 0, peaks,
                                                opts.precision)
    record["sol_fraction"] = sol.sol_fraction(record["sol_ms"], record["candidate_ms"])


BASELINE_ERROR_HEAD, BASELINE_ERROR_TAIL = 600, 3400


def _bounded_reason(reason: str, worker_output: str | None = None, traceback: str | None = None) -> str:
    """A failed baseline's reason, the worker's traceback and its last output, at most about 4,000
    characters: the head names the error, the tail holds the innermost cause (the worker's reason
    itself is cut at 500 characters, so a subprocess's traceback lives in the traceback)."""
    text = reason + (f"\n--- worker output (tail) ---\n{worker_output}" if worker_output else "")
    text += f"\n--- traceback (tail) ---\n{traceback}" if traceback else ""
    if len(text) <= BASELINE_ERROR_HEAD + BASELINE_ERROR_TAIL:
        return text
    cut = len(text) - BASELINE_ERROR_HEAD - BASELINE_ERROR_TAIL
    return f"{text[:BASELINE_ERROR_HEAD]}\n[... {cut} characters ...]\n{text[-BASELINE_ERROR_TAIL:]}"


def _note_mallocs(record: dict, who: str, calls: int, timed: int, retried: int = 0) -> None:
    """A remark when timed calls paid for cudaMalloc inside their window (see handlers.allocator_counts)."""
    if calls:
        record["remarks"].append(f"cuda_malloc_in_timed_calls: {who}: {calls} of {timed} timed calls "
                                 f"allocated new device memory inside the window, {retried} of them after "
                                 "an out-of-memory retry")


def _add_integrity_flags(record, verdict, cache, problem, opts, is_baseline) -> None:
    flags = record["flags"]
    alternation = verdict.get("timing")
    timing = alternation.outcomes[CANDIDATE] if alternation is not None else None
    from harness.judge.worker.guards import flags_for

    flags += flags_for(list(verdict.get("patched") or []) + list(timing.patched if timing else []))
    if verdict.get("new_threads") or (timing and timing.new_threads):
        # torch.compile starts compile threads, so for the trusted baselines this is only a remark;
        # for a candidate it is a flag (work deferred to a thread is also caught by output checks).
        (record["remarks"] if is_baseline else flags).append("thread_started")
    eager = alternation.outcomes.get("eager") if alternation is not None else None
    eager_overhead = median(eager.overhead_ms) if eager is not None and eager.overhead_ms else None
    mismatch = _timer_mismatch(timing, opts, eager_overhead) if timing is not None else None
    if mismatch:
        flags.append("timer_mismatch")
        record["remarks"].append(f"timer_mismatch: {mismatch}")
    floor = record["flag_floor_ms"]
    if floor and record["candidate_ms"] and record["candidate_ms"] * BELOW_SOL_SLACK < floor:
        flags.append("below_sol")
    degenerate = cache.degenerate.get((problem.id, problem.source_sha, opts.precision))
    record["degenerate"] = bool(degenerate)
    if degenerate:
        record["remarks"].append(f"degenerate_problem_probe: {', '.join(degenerate)} would pass")
        if record["status"] == "ok" and not is_baseline:
            flags.append("degenerate_problem")
    if record["status"] == "ok" and not is_baseline and not verdict.get("triton_launches"):
        from harness.judge.kernels import custom_kernel_ran

        if not custom_kernel_ran(verdict):
            flags.append("no_custom_kernel")
    record["flags"] = sorted(set(flags))


def _timer_mismatch(timing, opts, eager: float | None) -> str | None:
    """The judge's wall clock disagrees with the worker's times beyond what the trusted eager
    baseline's per-call overhead explains: time went unreported, or was reported that never passed.
    Returns what was seen, with its figures (the flag's remark, so that a flagged record explains
    itself), or None."""
    if timing.over_wall:
        reported, wall = timing.over_wall
        return (f"the worker reported {reported:.3f} ms of calls in a batch that the judge's own clock "
                f"timed at {wall:.3f} ms")
    overhead = timing.overhead_ms
    if not overhead or not timing.times_ms:
        return None
    # Floored: on a loaded machine the baseline's unreported time can measure near zero (its calls'
    # own times absorb the waiting), which would make any honest candidate's ordinary overhead look large.
    floor = MIN_ALLOWED_OVERHEAD_MS if opts.device == "cpu" else 0.0
    allowed = max(floor, eager or 0.5)
    typical = median(timing.times_ms)
    limit = 3 * allowed + 0.5 + 0.1 * typical
    # The least unreported time over the batches: deferred work shows in every batch, while a busy
    # machine delaying the judge's clock only in some batches does not make an honest run look bad.
    least = min(overhead)
    if least <= limit:
        return None
    cpu = [c for c in timing.overhead_cpu_ms if c is not None]
    clocks = f"wall clock at least {min(timing.overhead_wall_ms):.3f} ms"
    clocks += f", worker CPU time at least {min(cpu):.3f} ms" if cpu else ""
    eager_text = f"{eager:.3f} ms" if eager is not None else "not measured"
    return (f"unreported time per call at least {least:.3f} ms in each of {len(overhead)} "
            f"batches ({clocks}), over the limit of {limit:.3f} ms (3 x {allowed:.3f} + 0.5 + 10% of the "
            f"{typical:.3f} ms median; the eager baseline's unreported time {eager_text})")
