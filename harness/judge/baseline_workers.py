"""The eager and torch.compile baselines' workers of the problem being judged.

Every candidate is timed in alternation with its baselines (harness.judge.alternation), so the baselines'
workers must be live beside it. They run the harness's own code, so they are started, loaded and
checked once per problem and kept for every candidate of that problem (a generator that evaluates
many candidates pays for inductor's compile once), then closed when the judge moves on.

A baseline worker is alive while untrusted code runs in the candidate's: the candidate's sandbox
gives it no signal or ptrace of processes outside it (harness.judge.worker.sandbox), and the candidate's
worker is stopped whenever a baseline is timed (harness.judge.workers.WorkerSession.pause).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from harness.judge.workers import WorkerSession
from harness.problems.problem import Problem

# torch.compile compiles at the first call. A whole Level 3 network (DenseNet201, Swin V2) takes
# inductor minutes there, past the first-call limit meant for candidates; the baseline is the
# harness's own code, so it gets this long.
COMPILE_FIRST_CALL_S = 900.0
# A second eager worker, timed in the same rounds as the first: identical code in two processes, so
# its ratio to eager measures what the processes themselves add (CRUCIBLE_TIMING_CONTROL=1).
CONTROL = "eager_control"


def eager_source(problem: Problem) -> str:
    return problem.source + "\n\nModelNew = Model\n"


def compile_source(problem: Problem) -> str:
    return problem.source + (
        "\n\nclass ModelNew(Model):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        super().__init__(*args, **kwargs)\n"
        "        self._compiled_forward = torch.compile(Model.forward.__get__(self))\n\n"
        "    def forward(self, *args):\n"
        "        return self._compiled_forward(*args)\n"
    )


def baseline_source(problem: Problem, kind: str) -> str:
    return compile_source(problem) if kind == "compile" else eager_source(problem)


def baseline_options(opts, kind: str):
    """The compile baseline's first call gets COMPILE_FIRST_CALL_S; anything else is unchanged."""
    if kind != "compile":
        return opts
    limits = replace(opts.limits, first_call_s=max(opts.limits.first_call_s, COMPILE_FIRST_CALL_S))
    return replace(opts, limits=limits)


class BaselineWorkers:
    """Live, checked baseline workers for one problem at a time, keyed by the reference env."""

    def __init__(self):
        self.key: tuple | None = None
        self.sessions: dict[str, WorkerSession] = {}
        self.checked: set[str] = set()
        self.failures: dict[str, dict] = {}     # kind -> {status, reason, worker_output, traceback}
        self.phases: dict[str, dict] = {}       # kind -> seconds per phase, until a record takes them

    def start(self, env, kinds: list[str], opts) -> None:
        """Start (spawn, not wait for) the workers of ``kinds`` not yet live or failed."""
        self._switch_to(_env_key(env))
        for kind in kinds:
            if kind not in self.sessions and kind not in self.failures:
                session = WorkerSession(opts.device, baseline_options(opts, kind).limits, opts.gpu_index,
                                        trusted=True, spares_ahead=0)
                session.start()
                self.sessions[kind] = session

    def ready(self, env, kinds: list[str], opts, check: Callable[[WorkerSession, str], dict]) -> dict[str, WorkerSession]:
        """The checked, live workers of ``kinds``; each is checked (``check``: load and one
        correctness trial) the first time, and a failed one is closed and remembered."""
        import time

        self.start(env, kinds, opts)
        for kind in kinds:
            if kind in self.sessions and kind not in self.checked:
                began = time.perf_counter()
                verdict = check(self.sessions[kind], kind)
                self.phases[kind] = {**verdict.get("phases_s", {}), "check": round(time.perf_counter() - began, 3)}
                if verdict.get("status") == "ok":
                    self.checked.add(kind)
                else:
                    self.drop(kind, verdict.get("status", "runtime_error"), verdict.get("reason", ""),
                              verdict.get("worker_output") or "", verdict.get("traceback") or "")
        return {kind: self.sessions[kind] for kind in kinds if kind in self.checked}

    def drop(self, kind: str, status: str, reason: str, worker_output: str = "", traceback: str = "",
             remember: bool = True) -> dict:
        """Close a baseline's worker; ``remember``: its failure stands for the problem's later
        candidates too (a failed load or check), else the next candidate starts a new worker."""
        session = self.sessions.pop(kind, None)
        if session is not None:
            if not worker_output:
                worker_output = session.output_tail()
            session.close()
        self.checked.discard(kind)
        failure = {"status": status, "reason": reason, "worker_output": worker_output, "traceback": traceback}
        if remember:
            self.failures[kind] = failure
        return failure

    def failures_for(self, kinds: list[str]) -> dict[str, dict]:
        return {kind: self.failures[kind] for kind in kinds if kind in self.failures}

    def take_phases(self, kind: str) -> dict | None:
        """The seconds a baseline's start and check took, once: the first record that uses it."""
        return self.phases.pop(kind, None)

    def close(self) -> None:
        sessions, self.sessions = self.sessions, {}
        for session in sessions.values():
            session.close()
        self.checked.clear()

    def _switch_to(self, key: tuple) -> None:
        if key != self.key:
            self.close()
            self.key, self.failures, self.phases = key, {}, {}


def _env_key(env) -> tuple:
    return (env.problem.id, env.problem.source_sha, env.device, env.precision)
