"""One timing at a time per GPU, and nothing else on that GPU while it runs.

Every process that uses a GPU for judging takes that GPU's lock file: shared while it builds a
reference, loads a candidate or checks its outputs (``gpu_work``), exclusive while it times
(``timing_window``). Several processes (pytest-xdist workers sharing a GPU) so load and check
side by side, and an exclusive timing window waits until no other process is doing anything on
the GPU, and keeps them all out until it ends. A generator's own thinking (an LLM's answer, a
search on the CPU) holds no lock at all.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


class _Hold:
    """This process's open lock file for one GPU: how deep its shared holds go, and whether it is
    inside a timing window."""

    def __init__(self, path: Path):
        self.handle = open(path, "w")
        self.shared = 0
        self.exclusive = False


_HOLDS: dict[str, _Hold] = {}


def _lock_path(gpu_index: int | None) -> tuple[str, Path]:
    gpu = physical_gpu(gpu_index or 0)
    return gpu, Path(tempfile.gettempdir()) / f"crucible-gpu-{gpu}.lock"


@contextmanager
def gpu_work(device: str, gpu_index: int | None):
    """A shared hold on GPU ``gpu_index`` (0 when None) while this process works on it; re-entrant,
    and a no-op on the CPU."""
    if device != "cuda":
        yield
        return
    gpu, path = _lock_path(gpu_index)
    hold = _HOLDS.get(gpu)
    if hold is None:
        hold = _HOLDS[gpu] = _Hold(path)
    if hold.shared == 0 and not hold.exclusive:
        fcntl.flock(hold.handle, fcntl.LOCK_SH)
    hold.shared += 1
    try:
        yield
    finally:
        hold.shared -= 1
        if hold.shared == 0 and not hold.exclusive:
            fcntl.flock(hold.handle, fcntl.LOCK_UN)
            hold.handle.close()
            del _HOLDS[gpu]


@contextmanager
def timing_window(device: str, gpu_index: int | None, windows: list | None = None):
    """GPU ``gpu_index`` to this process alone while it times; a no-op on the CPU.

    Inside ``gpu_work`` the shared hold becomes exclusive and shared again afterwards. flock's change
    of mode lets go before it takes the new mode, so two processes that both hold the GPU shared and
    both want to time take turns rather than wait for each other. ``windows`` (a list) receives the
    (start, end) wall-clock interval the GPU was held exclusively: a run can show afterwards that no
    two timing windows on one GPU overlapped.
    """
    if device != "cuda":
        yield
        return
    gpu, path = _lock_path(gpu_index)
    hold = _HOLDS.get(gpu)
    own = hold is None
    if own:
        hold = _HOLDS[gpu] = _Hold(path)
    fcntl.flock(hold.handle, fcntl.LOCK_EX)
    hold.exclusive = True
    start = time.time()
    try:
        yield
    finally:
        if windows is not None:
            windows.append([start, time.time()])
        hold.exclusive = False
        if hold.shared:
            fcntl.flock(hold.handle, fcntl.LOCK_SH)
        else:
            fcntl.flock(hold.handle, fcntl.LOCK_UN)
            hold.handle.close()
            del _HOLDS[gpu]


exclusive_gpu = timing_window


def holding(device: str, gpu_index: int | None) -> bool:
    """Whether this process already holds GPU ``gpu_index`` (shared or exclusive)."""
    return device == "cuda" and physical_gpu(gpu_index or 0) in _HOLDS


def physical_gpu(index: int) -> str:
    """The GPU that visible device ``index`` is on this host (CUDA_VISIBLE_DEVICES maps them): processes
    that see different subsets of the GPUs, such as Ray tasks, still take one lock per physical GPU."""
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    return visible[index] if index < len(visible) else str(index)
