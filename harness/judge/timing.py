"""The judge's timing: the candidate and its baselines in alternation, fresh inputs for every
timed call, checked outputs, two clocks.

One protocol on both devices. Each worker times its own calls (CUDA events around the call and a
device-wide synchronize, or a CPU clock); the judge keeps its own wall clock over each batch,
refreshes the content of every input set before it is used again (so pointer and content caches
never hit), and compares a secret random sample of timed outputs with the reference. Which role
runs when, and when to stop, is harness.judge.alternation's.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.judge import checks

from harness.records import stats
from harness.judge.alternation import CANDIDATE, RoleFailed, Rounds, calls_per_batch, run_rounds
from harness.judge.reference import clone_inputs, inputs_equal, second_look

if TYPE_CHECKING:  # annotations only: the timer imports no judge or worker machinery
    from harness.judge.workers import WorkerSession
    from harness.judge.reference import ReferenceEnv

WARMUP_CALLS = 3


@dataclass
class TimingPlan:
    stop: stats.StopRule = field(default_factory=stats.StopRule)
    memory_budget_bytes: int = 1 << 30
    max_sets: int = 32
    check_all_below_elements: int = 1 << 22   # check every timed output when inputs are this small
    check_fraction: float = 0.25
    max_batch_calls: int = 16                 # calls per role and round; the judge's clocks get one sample per batch
    batch_ms: float = 10.0                    # aim for a batch of about this long (alternation.calls_per_batch)


@dataclass
class TimingOutcome:
    times_ms: list[float] = field(default_factory=list)
    # Unreported time per call, per recorded batch, by each clock (see _account); CPU None without /proc.
    overhead_wall_ms: list[float] = field(default_factory=list)
    overhead_cpu_ms: list[float | None] = field(default_factory=list)
    over_wall: tuple[float, float] | None = None              # (reported, wall) ms of the first batch that
                                                              # reported more time than passed
    failure: tuple[str, str] | None = None                   # (status, reason) of a timed output
    sets: int = 0
    checked: int = 0
    patched: list[str] = field(default_factory=list)
    new_threads: int = 0
    calls_with_malloc: int = 0     # CUDA: timed calls in which the worker's allocator called cudaMalloc
    calls_with_retry: int = 0      # ... of which after an out-of-memory retry (the device was full)
    rechecked: dict = field(default_factory=dict)  # checked outputs that passed only against float64

    @property
    def overhead_ms(self) -> list[float]:
        """Unreported time per call, per batch: the smaller of the two clocks (see _account)."""
        return [wall if cpu is None else min(wall, cpu) for wall, cpu in zip(self.overhead_wall_ms, self.overhead_cpu_ms)]

    def summary(self) -> stats.TimingStats | None:
        return stats.summarize(self.times_ms) if self.times_ms else None


@dataclass
class Alternation:
    """Every role's TimingOutcome, and the rounds (None where the candidate failed before them)."""

    outcomes: dict[str, TimingOutcome]
    rounds: Rounds | None = None
    cpus: list[int] | None = None      # the cores every role's worker was pinned to (harness.judge.placement)


def run_alternating(sessions: dict, env, plan: TimingPlan, tolerance: float, rng: random.Random,
                    batch_timeout_s: float, paused: set[str] = frozenset(), cpus: set[int] | None = None) -> Alternation:
    """Time the candidate (``sessions[CANDIDATE]``) and its baselines in alternation on the same
    input sets (harness.judge.alternation). Sessions named in ``paused`` run untrusted code: they are
    stopped (SIGSTOP) whenever another role is timed, so they do nothing while a baseline is timed,
    and their timed outputs are checked by the plan (all, or a secret random share); the others'
    (the harness's own code) one secret random call a batch. ``cpus``: the cores every role's worker
    is pinned to for the rounds (harness.judge.placement)."""
    from harness.judge.placement import pin

    roles = [CANDIDATE] + [role for role in sessions if role != CANDIDATE]
    result = Alternation({role: TimingOutcome() for role in roles})
    if cpus and all(pin(sessions[role].process.pid, cpus) for role in roles):
        result.cpus = sorted(cpus)
    sets, example = _initial_sets(env, plan)
    readback = readback_buffers(example, min(len(sets), plan.max_batch_calls))
    del example
    release_cache(env.device)  # what the judge freed is the workers' to use for their timed calls
    for role in roles:
        result.outcomes[role].sets = len(sets)
        sessions[role].request({"op": "set_timing_inputs", "sets": sets, "readback": readback}, batch_timeout_s, "timing")
    batches = _Batches(sessions, env, plan, tolerance, rng, batch_timeout_s, sets, readback, result.outcomes, paused)
    for session_role in paused:
        sessions[session_role].pause()
    try:
        failed: dict = {}
        typical = batches.warm_up(roles, failed)
        calls = calls_per_batch(typical, plan.batch_ms, min(len(sets), plan.max_batch_calls))
        result.rounds = run_rounds(roles, batches.time, calls, plan.stop)
        result.rounds.failed.update(failed)
    except RoleFailed as failure:
        result.outcomes[CANDIDATE].failure = (failure.status, failure.reason)
    finally:
        for session_role in paused:
            sessions[session_role].resume()
    env.drop_exact()
    return result


class _Batches:
    """One role's timed batch at a time: the round's input sets (refreshed once a round, the same
    for every role), poisoned readback slots, the request, both clocks, and the output check."""

    def __init__(self, sessions, env, plan, tolerance, rng, timeout_s, sets, readback, outcomes, paused):
        self.sessions, self.env, self.plan, self.tolerance, self.rng = sessions, env, plan, tolerance, rng
        self.timeout_s, self.sets, self.readback, self.outcomes, self.paused = timeout_s, sets, readback, outcomes, paused
        self.used: set[int] = set()
        self.counter = [0]
        self.next_index = 0
        self.round = None
        self.indices: list[int] = []
        self.expected: dict[int, tuple] = {}

    def warm_up(self, roles: list[str], failed: dict) -> float:
        """WARMUP_CALLS unrecorded calls per role; the slowest role's median call time (ms). A
        baseline that fails here goes into ``failed`` and leaves ``roles``; the candidate raises."""
        per_batch = min(WARMUP_CALLS, len(self.sets))
        typical = {}
        for number in range(-(-WARMUP_CALLS // per_batch)):
            for role in list(roles):
                try:
                    times = self._batch(role, ("warm-up", number), per_batch, record=False)
                except RoleFailed as failure:
                    if role == CANDIDATE:
                        raise
                    failed[role] = (failure.status, failure.reason)
                    roles.remove(role)
                    continue
                typical[role] = sorted(times)[len(times) // 2]
        return max(typical.values(), default=0.0)

    def time(self, role: str, number: int, calls: int) -> list[float]:
        return self._batch(role, number, calls, record=True)

    def _batch(self, role: str, number, calls: int, record: bool) -> list[float]:
        if number != self.round:
            self._new_round(number, calls)
        indices = self.indices
        outcome = self.outcomes[role]
        checked = (_choose_checked(indices, self.env, self.sets, self.plan, self.rng) if role in self.paused
                   else [self.rng.randrange(len(indices))])  # the harness's own code: one call a batch
        expected = {pos: self._expected(pos) for pos in checked}
        poison_batch(self.readback, len(indices), expected)
        session = self.sessions[role]
        if role in self.paused:
            session.resume()
        try:
            reply, wall_ms, cpu_ms = _time_batch(session, self.env.device, indices, self.timeout_s)
            if not reply.get("ok"):
                raise RoleFailed(role, reply.get("kind", "runtime_error"), reply.get("message", "timing failed"))
            times = _reply_times(reply, len(indices))
            if times is None:
                raise RoleFailed(role, "rejected", "malformed timing reply: times and fingerprints do not match the calls asked for")
            _account(outcome, reply, times, wall_ms, record=record, cpu_ms=cpu_ms)
            failure = _check_outputs(session, self.sets, indices, checked, expected, reply, self.tolerance,
                                     self.timeout_s, self.readback, self.env, outcome.rechecked)
        finally:
            if role in self.paused:
                session.pause()
        outcome.checked += len(checked)
        if failure:
            raise RoleFailed(role, *failure)
        return times

    def _new_round(self, number, calls: int) -> None:
        """The round's input sets: the next ``calls`` in turn, new content where used before."""
        self.round = number
        self.indices = [(self.next_index + k) % len(self.sets) for k in range(min(calls, len(self.sets)))]
        self.next_index = (self.next_index + len(self.indices)) % len(self.sets)
        _refresh(self.env, self.sets, [i for i in self.indices if i in self.used], self.counter)
        self.used.update(self.indices)
        # Expected outputs and pristine copies, computed once a round (every role gets the same sets)
        # and dropped before the next round makes its own.
        self.expected = {}

    def _expected(self, position: int) -> tuple:
        if position not in self.expected:
            inputs = self.sets[self.indices[position]]
            self.expected[position] = (self.env.expected(inputs), clone_inputs(inputs))
        return self.expected[position]


def _time_batch(session: WorkerSession, device: str, indices: list[int], timeout_s: float):
    """One timed batch: the worker's reply, the judge's wall clock and the worker's CPU time for it."""
    _synchronize(device)  # the slots' poison is written before the worker's copies (other streams)
    # On the GPU the worker may sleep in synchronize: its CPU time says nothing about GPU work.
    cpu_before = worker_cpu_ms(session) if device == "cpu" else None
    reply = session.request({"op": "time", "indices": indices}, timeout_s, "timing")
    cpu_ms = _difference(worker_cpu_ms(session), cpu_before)
    return reply, 1e3 * session.last_wall_s, cpu_ms


# Outputs at least this large: the judge hands its cached blocks back to the driver before
# every correctness call, not only before the first. Its expected outputs, pristine copies and the
# reference's own intermediates leave several full-size blocks cached that the worker could
# otherwise not have (a 7 GiB-per-tensor problem ran the H200 out of memory with both processes'
# caches full). Timing releases once, when it starts (run_timing).
LARGE_SET_BYTES = 1 << 30


def release_cache(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.empty_cache()


def _initial_sets(env: ReferenceEnv, plan: TimingPlan) -> tuple[list[list], list]:
    """The timing input sets, as many as the memory budget allows, and the reference's outputs on
    the first (their sizes set the count; their shapes, the readback slots')."""
    first = env.make_inputs(env.timing_seed(0))
    example = env.expected(first)
    per_set = 3 * _bytes(first) + 2 * _bytes(example)
    count = max(1, min(plan.max_sets, plan.memory_budget_bytes // max(per_set, 1)))
    return [first] + [env.make_inputs(env.timing_seed(n)) for n in range(1, count)], example


def _refresh(env: ReferenceEnv, sets: list[list], indices: list[int], counter: list[int]) -> None:
    """New content, same memory: a set used before gets never-seen values before its next use."""
    import torch

    for index in indices:
        counter[0] += 1
        fresh = env.make_inputs(env.timing_seed(10_000 + counter[0]))
        for old, new in zip(sets[index], fresh):
            if isinstance(old, torch.Tensor):
                old.copy_(new)


def _choose_checked(indices: list[int], env: ReferenceEnv, sets, plan: TimingPlan, rng: random.Random) -> list[int]:
    import torch

    elements = sum(t.numel() for t in sets[indices[0]] if isinstance(t, torch.Tensor))
    if elements <= plan.check_all_below_elements:
        return list(range(len(indices)))
    chosen = [pos for pos in range(len(indices)) if rng.random() < plan.check_fraction]
    return chosen or [rng.randrange(len(indices))]


def _account(outcome: TimingOutcome, reply: dict, times: list[float], wall_ms: float, record: bool,
             cpu_ms: float | None = None) -> None:
    """Keep the batch's times, and the time per call the worker did not report.

    Unreported time is judged by two clocks the worker cannot touch: the judge's wall clock and the
    kernel's count of the worker's CPU time (all its threads). Work hidden after a call returns, or
    times reported short, raise both; a loaded machine raises only the wall clock (waiting is not
    CPU time) and a multi-threaded kernel only the CPU count, so the smaller of the two is kept.
    The reported-over-wall check stays on the wall clock: time reported that never passed.
    """
    outcome.patched = sorted(set(outcome.patched) | set(reply.get("patched", [])))
    allocs, retries = reply.get("device_allocs"), reply.get("alloc_retries")
    if record and isinstance(allocs, list):
        # the worker's own count, so informational only (a remark, never a flag or a verdict)
        outcome.calls_with_malloc += sum(1 for n in allocs if type(n) is int and n > 0)
        if isinstance(retries, list) and len(retries) == len(allocs):
            outcome.calls_with_retry += sum(1 for n, r in zip(allocs, retries)
                                            if type(n) is int and n > 0 and type(r) is int and r > 0)
    outcome.new_threads = max(outcome.new_threads, reply.get("new_threads", 0))
    reported = sum(times)
    if reported > wall_ms + 1.0:
        outcome.over_wall = outcome.over_wall or (reported, wall_ms)
    if record:
        outcome.times_ms += times
        calls = max(1, len(times))
        # Never below zero: under load a call's own wall time includes waiting the CPU count lacks.
        outcome.overhead_wall_ms.append(max(0.0, wall_ms - reported) / calls)
        outcome.overhead_cpu_ms.append(None if cpu_ms is None else max(0.0, cpu_ms - reported) / calls)


def worker_cpu_ms(session) -> float | None:
    """CPU time used so far by the worker's live threads, from /proc (nanosecond counters); None
    where the platform has no such files."""
    process = getattr(session, "process", None)
    if process is None:
        return None
    total = 0
    try:
        for task in os.scandir(f"/proc/{process.pid}/task"):
            with open(f"{task.path}/schedstat") as handle:
                total += int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e6


def _difference(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before


def readback_buffers(example: list, slots: int) -> list[list]:
    """Judge-owned memory the worker copies each timed output into, shared with it once.

    One slot per call of a batch, each shaped like the reference's outputs. The worker copies an
    output into its slot right after the call and lets go of it, so the next call reuses its block:
    with outputs kept until the judge had read the checked ones, each batch larger than the warm-up
    allocated new blocks inside its first windows (on the H200, 3 of 12 timed calls of L1/40 and
    L2/40, eager and candidate alike; docs/HARNESS.md). Its own output blocks also never enter CUDA
    IPC, where a block returns to its caching allocator only once both processes let go of it.
    """
    return [[t.new_empty(t.shape) for t in example] for _ in range(slots)]


def poison_batch(readback: list, calls: int, expected: dict) -> None:
    """Before a batch: poison the slots its calls will fill, so a slot the worker says it copied
    into but did not shows a mismatch. Every slot is poisoned (which calls are checked stays secret);
    a checked call's slot so that every element differs from its expected output."""
    for position in range(min(calls, len(readback))):
        want = expected[position][0] if position in expected else None
        _poison_readback(readback[position], want)


def _poison_readback(slot: list, want: list | None) -> None:
    """NaN in floating buffers; elsewhere each element flipped from the expected output (from the
    buffer's own stale content where there is none to hand)."""
    import torch

    for number, buffer in enumerate(slot):
        if buffer.is_floating_point() or buffer.is_complex():
            buffer.fill_(float("nan"))
            continue
        reference = want[number] if want is not None and number < len(want) else buffer
        if reference.shape != buffer.shape or reference.dtype != buffer.dtype:
            reference = buffer
        if buffer.dtype == torch.bool:
            torch.logical_not(reference, out=buffer)
        else:
            torch.bitwise_xor(reference, 1, out=buffer)


def _received_outputs(entries, readback: list, checked: list[int]) -> list[list] | None:
    """The checked outputs: the call's readback slot where the worker copied into it (entry None),
    else the tensors it sent (an output the slots do not fit: another shape, dtype or count)."""
    if not isinstance(entries, list) or len(entries) != len(checked):
        return None
    if any(entry is None and position >= len(readback) for position, entry in zip(checked, entries)):
        return None
    received = [readback[position] if entry is None else entry for position, entry in zip(checked, entries)]
    return received if _well_formed_outputs(received, len(checked)) else None


def _check_outputs(session, sets, indices, checked, expected, reply, tolerance, timeout_s, readback, env, rechecked):
    if not checked:
        session.request({"op": "outputs", "positions": []}, timeout_s, "timing")
        return None
    got = session.request({"op": "outputs", "positions": checked}, timeout_s, "timing")
    if not got.get("ok"):
        return got.get("kind", "runtime_error"), got.get("message", "could not read timed outputs")
    outputs = _received_outputs(got.get("outputs"), readback, checked)
    if outputs is None:
        return "rejected", "malformed outputs reply: not one list of tensors (or copied slot) per checked call"
    for position, received in zip(checked, outputs):
        want, pristine = expected[position]
        received = list(received)
        result = second_look(env, pristine, want, received, tolerance,
                             checks.compare_outputs(want, received, tolerance, tolerance), rechecked)
        if not result.ok:
            return "incorrect", f"timed call {position} of a batch: {result.reason}"
        if not inputs_equal(sets[indices[position]], pristine):
            return "incorrect", "input_mutated: the candidate changed its inputs during a timed call"
        if not _fingerprints_match(received, reply["fingerprints"][position]):
            return "incorrect", "output_changed_after_return: a timed output changed after the call returned"
    return None


def _reply_times(reply: dict, calls: int) -> list[float] | None:
    """The reply's per-call times, if it has one finite time and one fingerprint list per call."""
    times, prints = reply.get("times_ms"), reply.get("fingerprints")
    if not isinstance(times, list) or not isinstance(prints, list) or len(times) != calls or len(prints) != calls:
        return None
    if not all(type(t) in (int, float) and t == t and t >= 0 and t != float("inf") for t in times):
        return None
    if not all(isinstance(p, list) and all(type(v) in (int, float) for v in p) for p in prints):
        return None
    return [float(t) for t in times]


def _well_formed_outputs(outputs, count: int) -> bool:
    import torch

    return (isinstance(outputs, list) and len(outputs) == count
            and all(isinstance(o, list) and all(type(t) is torch.Tensor for t in o) for o in outputs))


def _fingerprints_match(received, reported) -> bool:
    from harness.judge.worker.handlers import fingerprint

    if len(received) != len(reported):
        return False
    for tensor, value in zip(received, reported):
        mine = fingerprint(tensor)
        if not math.isfinite(abs(mine)) or not math.isfinite(abs(value)):
            if repr(mine) != repr(value):
                return False
        elif abs(mine - value) > 1e-6 * max(1.0, abs(mine)):
            return False
    return True


def _synchronize(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def _bytes(values) -> int:
    from harness.judge.sol import tensor_bytes

    return tensor_bytes(values)
