"""Opt-in trace of GPU memory per worker request, for diagnosing full-size problems.

With ``CRUCIBLE_CUDA_MEMORY_TRACE=FILE`` set in the judge's environment, every request on a CUDA
worker appends one JSON line to FILE after its reply: the phase and op, the judge's own allocated
and reserved bytes, the device's free bytes, and what NVML says each process (judge, worker,
spares) holds. Everything is read on the judge's side; the worker is never asked, so candidate code
cannot shape the trace. Off by default: NVML queries cost milliseconds.
"""

from __future__ import annotations

import json
import os
import re
import time

ENV = "CRUCIBLE_CUDA_MEMORY_TRACE"
_GIB = float(1 << 30)


def enabled() -> bool:
    return bool(os.environ.get(ENV))


def record(op: str, phase: str, worker_pid: int | None, extra: dict | None = None) -> None:
    """Append one line to the trace file; never raises (a diagnostic must not change a verdict).

    ``extra`` adds fields the judge already holds (a timed batch's times, the worker's cudaMalloc
    counts, how long the worker sat idle before the request), so one trace shows whether slow timed
    calls are the ones that allocated or the ones after a long gap.
    """
    path = os.environ.get(ENV)
    if not path:
        return
    try:
        import torch

        free, total = torch.cuda.mem_get_info()
        row = {"t": round(time.time(), 3), "op": op, "phase": phase, "worker_pid": worker_pid,
               "judge_pid": os.getpid(),
               "judge_allocated_gib": round(torch.cuda.memory_allocated() / _GIB, 2),
               "judge_reserved_gib": round(torch.cuda.memory_reserved() / _GIB, 2),
               "free_gib": round(free / _GIB, 2), "total_gib": round(total / _GIB, 2),
               "processes_gib": _processes(torch)}
        row.update(extra or {})
        with open(path, "a") as handle:
            handle.write(json.dumps(row) + "\n")
    except Exception as error:  # noqa: BLE001 - best effort by design
        try:
            with open(path, "a") as handle:
                handle.write(json.dumps({"op": op, "phase": phase, "error": repr(error)[:200]}) + "\n")
        except OSError:
            pass


def _processes(torch) -> dict[str, float]:
    """NVML's memory per process, from torch.cuda.list_gpu_processes' text (pid -> GiB)."""
    text = torch.cuda.list_gpu_processes()
    found = {}
    for pid, mib in re.findall(r"process\s+(\d+)\s+uses\s+([\d.]+)\s+MB", text):
        found[pid] = round(float(mib) / 1024, 2)
    return found
