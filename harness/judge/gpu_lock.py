"""One timing at a time per GPU: a file lock that every process timing on that GPU takes.

pytest-xdist workers that share a GPU load, compile and check candidates concurrently, but
queue here for the timed part, so no two timings ever share a GPU.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive_gpu(device: str, gpu_index: int | None, windows: list | None = None):
    """Hold GPU ``gpu_index`` (0 when None) while timing on it; a no-op on the CPU.

    ``windows`` (a list) receives the (start, end) wall-clock interval the lock was held, so runs
    can show afterwards that intervals on one GPU never overlap.
    """
    if device != "cuda":
        yield
        return
    path = Path(tempfile.gettempdir()) / f"crucible-gpu-{physical_gpu(gpu_index or 0)}.lock"
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        start = time.time()
        try:
            yield
        finally:
            if windows is not None:
                windows.append([start, time.time()])
            fcntl.flock(handle, fcntl.LOCK_UN)


def physical_gpu(index: int) -> str:
    """The GPU that visible device ``index`` is on this host (CUDA_VISIBLE_DEVICES maps them): processes
    that see different subsets of the GPUs, such as Ray tasks, still take one lock per physical GPU."""
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    return visible[index] if index < len(visible) else str(index)
