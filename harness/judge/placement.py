"""Where timing workers run on the host: every worker of one alternation on the same cores.

A launch-bound model's time is host time, and host time depends on the core a process lands on
(its clock, what else runs there, its memory node). Alternation cancels what changes over time;
pinning the candidate's and the baselines' workers to one core set cancels where each landed, so
that neither role is timed on a faster core than the other. ``CRUCIBLE_TIMING_CPUS`` names the set
("0-3", "2,5"), "all" leaves placement to the kernel; by default CUDA workers of GPU k share the
k-th block of ``CORES_PER_GPU`` cores of the judge's own set, and CPU workers are left alone (the
judge's xdist workers share the CPU machine's few cores).
"""

from __future__ import annotations

import os

CORES_PER_GPU = 4
SWITCH = "CRUCIBLE_TIMING_CPUS"


def timing_cpus(device: str, gpu_index: int | None, environ=os.environ) -> set[int] | None:
    """The cores every timing worker of this judge is pinned to, or None to leave them be."""
    chosen = environ.get(SWITCH, "").strip()
    if chosen == "all":
        return None
    if chosen:
        return parse_cpus(chosen)
    if device != "cuda" or not hasattr(os, "sched_getaffinity"):
        return None
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) < 2 * CORES_PER_GPU:
        return None  # too few to set a block apart
    start = (gpu_index or 0) * CORES_PER_GPU % len(mine)
    return set(mine[start:start + CORES_PER_GPU])


def parse_cpus(text: str) -> set[int]:
    """"0-3,6" -> {0, 1, 2, 3, 6}; a clear error for anything else."""
    from harness.errors import UserError

    cpus: set[int] = set()
    try:
        for part in text.split(","):
            low, _, high = part.strip().partition("-")
            cpus.update(range(int(low), int(high or low) + 1))
    except ValueError:
        raise UserError(f"{SWITCH}={text!r} is not a core list such as '0-3' or '2,5' (or 'all')") from None
    if not cpus:
        raise UserError(f"{SWITCH}={text!r} names no cores")
    return cpus


def pin(pid: int, cpus: set[int] | None) -> bool:
    """Pin every thread of process ``pid`` to ``cpus``; False where that was not possible."""
    if cpus is None or not hasattr(os, "sched_setaffinity"):
        return False
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            os.sched_setaffinity(int(task), cpus)
    except (OSError, ValueError):
        return False
    return True
