"""Timing the megakernel and its baselines on a GPU, in the harness's protocol (``do_bench``'s shape).

Each timed call is a zero-argument callable with its inputs prepared outside it; before every
repetition the L2 cache is flushed (a write over twice its size); one event pair times one call.
The callables are timed in alternation, round after round, so drift hits them all alike; each gets
warm-up calls first; rounds stop when every callable's relative standard error is below the target
or the time budget is spent. Statistics are ``harness.records.stats.summarize`` (median, bootstrap interval).
"""

from __future__ import annotations

import time

from harness.records import stats


def time_alternating(fns: dict, device: str = "cuda", budget_s: float = 10.0, min_reps: int = 20,
                     max_reps: int = 500, rse_target: float = 0.01, warmup: int = 5) -> dict[str, dict]:
    """{name: TimingStats as a dict} for zero-argument callables that launch GPU work."""
    import torch

    from harness.judge.device import l2_bytes

    flush = torch.empty(max(2 * l2_bytes(device), 1 << 20) // 4, dtype=torch.float32, device=device)
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    torch.cuda.synchronize(device)
    times: dict[str, list[float]] = {name: [] for name in fns}
    started = time.perf_counter()
    for rep in range(max_reps):
        for name, fn in fns.items():
            flush.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end))
        if rep + 1 >= min_reps and (time.perf_counter() - started > budget_s or
                                    all(stats.relative_standard_error(t) < rse_target for t in times.values())):
            break
    return {name: stats.summarize(t).to_dict() for name, t in times.items()}


def schedule_ms(doc: dict, weights: dict, device: str = "cuda", budget_s: float = 2.0) -> dict:
    """Median launch time of one schedule (plain launches, no graph): what the schedule search ranks by."""
    from harness.megakernel.executor import Megakernel

    prepared = Megakernel(weights, device).prepare(doc)
    launch = prepared.step({"token": 1})
    if not launch.ok:
        return {"ok": False, "deadlock": launch.deadlock}
    timing = time_alternating({"megakernel": prepared.launch}, device, budget_s=budget_s, max_reps=200)["megakernel"]
    return {"ok": True, **timing}


def graphed(fn, device: str = "cuda"):
    """A CUDA graph of ``fn`` (one or more launches), returned as its replay."""
    import torch

    stream = torch.cuda.Stream(device)
    stream.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(stream):
        for _ in range(2):
            fn()
    torch.cuda.current_stream(device).wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay
