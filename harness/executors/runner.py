"""Running a generator over problems: generate candidates, judge each, append records to the run file.

Shared by ``python -m harness run`` and the pytest plugin. A generator that fails (a bug) becomes
a ``rejected`` record with the reason, and the run goes on. A candidate the LLM endpoint failed
(retries spent, a refused request) is recorded with status ``endpoint_error`` (the judge's verdict,
if any, in ``judged_status``): the model never got to finish, so metrics leave it out, and
``--resume`` runs the problem again. An endpoint that cannot serve the run at all (key refused,
model missing, server unreachable, quota spent) stops the run after that problem's records are
written, with ``EndpointUnusable`` saying what to fix.
"""

from __future__ import annotations

import copy
import os
import traceback
from contextlib import nullcontext
from pathlib import Path
from typing import Callable

from harness import registry
from harness.candidate import Budget, Candidate, GenerationContext
from harness.errors import UserError
from harness.judge.evaluate import EvalCache, EvalOptions, evaluate, judge_failure_record
from harness.judge.gpu_lock import gpu_work
from harness.judge.workers import settle_spare_workers
from harness.llm.base import EndpointUnusable
from harness.problems.problem import Problem
from harness.records.results import RunWriter, new_run_id, resume_conflicts, run_file_name, run_segments
from harness.records.usage import Usage

# How a CUDA call is timed (the run header's config "timer"; a run file is resumed only with the same):
# events around the call and a device-wide synchronize, less the synchronize's least round trip
# (harness/judge/worker/handlers.py, _timed_call). Older runs name older timers: "cuda_events+device_sync"
# (the window with the round trip left in), then "cuda_events+device_sync-round_trip_floor" (without
# the call's host time as a floor). An SM-filling hold is queued before each window
# (harness/judge/worker/hold.py; on by default, off with CRUCIBLE_CUDA_HOLD=0), and the timer is then named
# with "sm_hold+" before it.
CUDA_TIMER = "cuda_events+device_sync-round_trip_floor,host_floor"
HOLD_TIMER = "sm_hold+" + CUDA_TIMER


def cuda_timer(environ=os.environ) -> str:
    from harness.judge.worker.hold import requested

    return HOLD_TIMER if requested(environ) else CUDA_TIMER


class Runner:
    def __init__(self, generator: str, opts: EvalOptions, runs_dir: str | Path = "runs", *,
                 generator_options: dict | None = None, suite: str = "kernelbench", run_id: str | None = None,
                 run_file: str | Path | None = None, resume: bool = False, budget: Budget | None = None,
                 run_budget: Budget | None = None, log: Callable[[str], None] = print, extra_config: dict | None = None,
                 sink: Callable[[dict], None] | None = None, run_ledger=None):
        self.generator_name = generator
        self.generator = registry.create("generator", generator, **(generator_options or {}))
        self.generator_options = dict(generator_options or {})
        self.opts = opts
        self.cache = EvalCache(opts.secret)
        self.budget = budget or Budget()
        self.run_budget = run_budget or Budget()
        self.spent = Usage()
        self.log = log
        self.run_id = run_id or new_run_id()
        # the run-wide spending that every process of the run shares (harness/executors/ledger.py)
        self.run_ledger = run_ledger
        self.stopped: str | None = None  # why the endpoint cannot serve this run; no problem runs after it
        # this problem's drafts whose verdict is the one the candidate would get again (_final_as_judged)
        self.judged: dict[tuple, dict] = {}
        if sink is not None:  # another process writes the run file (harness/executors/ray_task.py)
            self.path, self.done, self.writer = None, set(), _Sink(sink)
            return
        path = Path(run_file) if run_file else _resume_target(runs_dir, suite, generator) if resume else None
        self.path = path or Path(runs_dir) / run_file_name(self.run_id, suite, generator)
        header = self._header(suite, generator_options, extra_config)
        if resume:
            _check_resumable(self.path, header)
        self.done = _completed(self.path) if resume else set()
        self.writer = RunWriter(self.path, header=header)

    def _header(self, suite: str, generator_options: dict | None, extra: dict | None) -> dict:
        from harness.judge.device import provenance

        opts = self.opts
        return {"run_id": self.run_id, "provenance": provenance(opts.device),
                "config": {"suite": suite, "generator": self.generator_name, "generator_options": generator_options or {},
                           "precision": opts.precision, "size": opts.size, "device": opts.device,
                           "trials": opts.trials, "tolerance": opts.tol(), "compile_baseline": opts.with_compile(),
                           "flags": {"allow_tf32": opts.allow_tf32}, "timer": cuda_timer() if opts.device == "cuda" else "perf_counter_ns",
                           "seeds": "public+secret" if opts.secret is None else "public+fixed", **(extra or {})}}

    def already_done(self, problem: Problem) -> bool:
        return any(key[0] == problem.id and key[1] == self.generator_name for key in self.done)

    def run_problem(self, problem: Problem) -> list[dict]:
        """Generate and judge; every record is on disk before this returns (also when it raises
        EndpointUnusable to stop the run)."""
        if self.stopped:
            raise EndpointUnusable(self.stopped)
        self.judged = {}
        # Generation holds no GPU lock (an LLM's answer can take minutes); each evaluation holds the
        # GPU shared while it works there and exclusively while it times (harness.judge.gpu_lock).
        candidates = self._candidates(problem)
        locked = self.opts.device == "cuda" and self.opts.timing
        with gpu_work(self.opts.device, self.opts.gpu_index) if locked else nullcontext():
            records = [self._record(problem, c, i) for i, c in enumerate(candidates)]
            self.cache.release()
            if locked:  # a spare still starting (CUDA context) would disturb another process's timing
                settle_spare_workers()
        self._stop_if_unusable(candidates)
        return records

    def _stop_if_unusable(self, candidates: list[Candidate]) -> None:
        fatal = next((c.provenance.get("endpoint_error") for c in candidates if c.provenance.get("endpoint_fatal")), None)
        if fatal:
            ending = "" if fatal.rstrip().endswith((".", "?", "!")) else "."
            self.stopped = (f"{fatal.rstrip()}{ending} The run stopped here; what it measured is in {self.path} "
                            "(rerun with --resume once this is fixed)")
            raise EndpointUnusable(self.stopped)   # the front end (CLI, pytest) prints it, once

    def _candidates(self, problem: Problem) -> list[Candidate]:
        stopped = self.run_budget.exceeded_by(self.run_ledger.spent() if self.run_ledger else self.spent)
        if stopped:
            return [Candidate("", provenance={"stopped": f"run {stopped}"})]
        ctx = GenerationContext(options=self.opts, evaluate=self._draft_evaluator(problem), budget=self.budget,
                                device_facts=self._device_facts(), log=self.log, run_budget=self.run_budget,
                                run_usage=self.spent, run_ledger=self.run_ledger)
        try:
            candidates = list(self.generator.generate(problem, ctx))
        except UserError as error:  # the user must fix something first (an unusable endpoint, a missing price)
            self.stopped = str(error)
            raise   # the front end (CLI, pytest) prints it, once
        except Exception as error:  # noqa: BLE001 - a failing generator must not end the run
            reason = f"generation_failed: {type(error).__name__}: {error}"
            self.log(f"{problem.id}: {reason}")
            return [Candidate("", provenance={"stopped": reason, "traceback": traceback.format_exc(limit=5)})]
        return candidates or [Candidate("", provenance={"stopped": "the generator returned no candidate"})]

    def _draft_evaluator(self, problem: Problem):
        def evaluate_draft(source: str, timing: bool = False, profile: bool = False) -> dict:
            opts = _with(self.opts, timing=timing)
            record = evaluate(problem, source, opts, self.cache, profile=profile,
                              identity={"generator": self.generator_name})
            if _final_as_judged(record, self.opts):
                self.judged[(problem.id, record["candidate_sha"])] = copy.deepcopy(record)
            record.pop("candidate_source", None)
            return record

        return evaluate_draft

    def _device_facts(self) -> dict:
        from harness.judge.device import device_name

        return {"device": self.opts.device, "name": device_name(self.opts.device),
                "peaks": (lambda: self.cache.peaks(self.opts.device))}

    def _record(self, problem: Problem, candidate: Candidate, attempt: int) -> dict:
        identity = {"generator": self.generator_name, "provider": candidate.provider, "model": candidate.model,
                    "attempt": attempt,
                    "stopped": candidate.provenance.get("stopped") or candidate.provenance.get("no_code")}
        trusted = bool(getattr(self.generator, "trusted_baseline", False))
        judged = self.judged.get((problem.id, Candidate(candidate.source).sha)) if not trusted else None
        try:
            record = _as_final(judged, identity, self.opts) if judged else \
                evaluate(problem, candidate.source, self.opts, self.cache, identity=identity, baseline=trusted)
        except Exception as error:  # noqa: BLE001 - the judge's own failure is recorded, and the run goes on
            self.cache.release()
            record = judge_failure_record(problem, candidate.source, self.opts, identity, error)
            self.log(f"{problem.id}: {record['reason']}")
        if candidate.provenance.get("endpoint_error"):
            record.update(judged_status=record.get("status"), status="endpoint_error",
                          endpoint_error=candidate.provenance["endpoint_error"])
        self.spent = self.spent + candidate.usage
        record.update(run_id=self.run_id, label=candidate.label, usage=candidate.usage.to_dict(),
                      transcript=candidate.transcript, provenance=candidate.provenance,
                      fixes=problem.fixes or None, shrunk=problem.shrunk, gpu_index=self.opts.gpu_index)
        self.writer.append(record)
        return record


def _final_as_judged(record: dict, opts: EvalOptions) -> bool:
    """Whether a draft's record is exactly the one judging the same source again would give.

    On the CPU a candidate whose Triton kernels ran in the interpreter is never timed, so its final
    judgement is the correctness judgement the draft already had: the same source, the run's own
    reference and secret inputs, the same trials, the same static reading. Generators often check
    their final source as a draft (mkevolve checks its composition end to end); judging it a second
    time was most of a whole-network problem's CPU time. A failure is judged again (a timeout may not
    repeat), and so is anything that would be timed."""
    return (opts.device == "cpu" and record.get("status") == "ok" and bool(record.get("triton_launches"))
            and not record.get("profile"))


def _as_final(judged: dict, identity: dict, opts: EvalOptions) -> dict:
    from harness.judge.evaluate import SPEED_NOT_MEASURED_CPU

    record = copy.deepcopy(judged)
    record.update({k: identity.get(k) for k in ("generator", "provider", "model", "attempt")})
    record["judged_as_draft"] = True   # this verdict is the draft's: the same source was not run twice
    if opts.timing and SPEED_NOT_MEASURED_CPU not in record["remarks"]:
        record["remarks"].append(SPEED_NOT_MEASURED_CPU)
    return record


class _Sink:
    """Hands each record to a function instead of a run file (the RunWriter's one method)."""

    def __init__(self, receive: Callable[[dict], None]):
        self.append = receive


def _with(opts: EvalOptions, **changes) -> EvalOptions:
    from dataclasses import replace

    return replace(opts, **changes)


def _completed(path: Path) -> set[tuple]:
    """Keys already recorded, less those the endpoint failed: a resumed run asks for them again."""
    from harness.records.results import read_lines

    if not path.exists():
        return set()
    return {(r.get("problem_id"), r.get("generator"), r.get("attempt", 0)) for r in read_lines(path)
            if r.get("type") == "record" and r.get("status") != "endpoint_error"}


def _resume_target(runs_dir: str | Path, suite: str, generator: str) -> Path | None:
    """The newest run file of this suite and generator, to append to."""
    suffix = "_" + run_file_name("x", suite, generator).split("_", 1)[1]
    found = sorted(Path(runs_dir).glob(f"*{suffix}")) if Path(runs_dir).is_dir() else []
    return found[-1] if found else None


def _check_resumable(path: Path, header: dict) -> None:
    """--resume appends only to a run of the same machine and settings: one file, one kind of figure."""
    segments = run_segments(path)
    if not segments:
        return
    first = next(iter(segments.values()))
    conflicts = resume_conflicts(first, header)
    if conflicts:
        raise UserError(f"--resume would append to {path}, which another kind of run wrote ("
                        + "; ".join(conflicts) + "). Leave out --resume to start a new run file, or "
                        "give --runs-dir a folder of its own for these settings.")


def gpu_for_worker(worker_id: str | None, gpu_count: int) -> int | None:
    """xdist worker ``gw<N>`` takes GPU N modulo the number of GPUs."""
    if not worker_id or not worker_id.startswith("gw") or gpu_count <= 0:
        return None
    return int(worker_id[2:]) % gpu_count


def visible_gpu_count() -> int:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and not visible.strip():
        return 0
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0
