"""Cost model for ranking schedules: bytes and FLOPs per SM, and a simulated makespan.

Each task takes max(bytes / per-SM bandwidth, FLOPs / per-SM peak) plus a fixed dispatch cost and
a synchronisation cost per wait. Start times follow the schedule: after the SM's previous task, and
after the k-th completion among a waited counter's producers. The makespan is the estimate; it is
for ranking candidates, not a prediction of measured time.
"""

from __future__ import annotations

from harness.megakernel.format import queues

DISPATCH_S = 0.4e-6   # per task: fetch the instruction, set up the tile
SYNC_S = 0.3e-6       # per wait: an acquire load of a global counter that has just flipped


def estimate(doc: dict) -> dict:
    target = doc["target"]
    sms = target["num_sms"]
    bandwidth = target.get("hbm_gbs", 4800.0 * sms / 132) * 1e9 / sms
    peak = target.get("tflops", 989.0 * sms / 132) * 1e12 / sms
    tasks = {t["id"]: t for t in doc["tasks"]}
    duration = {tid: max(t.get("est_bytes", 0) / bandwidth, t.get("est_flops", 0) / peak)
                + DISPATCH_S + SYNC_S * len(t["waits"]) for tid, t in tasks.items()}
    end = _simulate(doc, tasks, duration)
    per_sm_bytes, per_sm_flops = _per_sm(doc)
    loads = list(per_sm_bytes.values())
    return {"makespan_us": max(end.values(), default=0.0) * 1e6, "per_sm_bytes": per_sm_bytes,
            "per_sm_flops": per_sm_flops, "max_sm_bytes": max(loads, default=0),
            "total_bytes": sum(loads), "total_flops": sum(per_sm_flops.values()),
            "imbalance": (max(loads) * len(loads) / sum(loads)) if loads and sum(loads) else 1.0}


def _simulate(doc: dict, tasks: dict, duration: dict) -> dict[int, float]:
    producers: dict[int, list[int]] = {}
    for tid, task in tasks.items():
        producers.setdefault(task["out_counter"], []).append(tid)
    heads = {sm: 0 for sm in queues(doc)}
    order, sm_free, end = queues(doc), {sm: 0.0 for sm in queues(doc)}, {}
    progress = True
    while progress:
        progress = False
        for sm, queue in order.items():
            while heads[sm] < len(queue):
                start = _ready_time(tasks[queue[heads[sm]]], producers, end)
                if start is None:
                    break
                tid = queue[heads[sm]]
                end[tid] = max(start, sm_free[sm]) + duration[tid]
                sm_free[sm] = end[tid]
                heads[sm] += 1
                progress = True
    return end


def _ready_time(task: dict, producers: dict, end: dict) -> float | None:
    start = 0.0
    for wait in task["waits"]:
        finished = sorted(end[p] for p in producers.get(wait["counter"], []) if p in end)
        if len(finished) < wait["threshold"]:
            return None
        start = max(start, finished[wait["threshold"] - 1])
    return start


def _per_sm(doc: dict) -> tuple[dict[int, int], dict[int, int]]:
    nbytes: dict[int, int] = {}
    flops: dict[int, int] = {}
    for task in doc["tasks"]:
        nbytes[task["sm"]] = nbytes.get(task["sm"], 0) + task.get("est_bytes", 0)
        flops[task["sm"]] = flops.get(task["sm"], 0) + task.get("est_flops", 0)
    return nbytes, flops
