"""Validator throughput: small schedules of the corpus, the whole corpus, the largest lowering."""

from __future__ import annotations

import time

from harness.megakernel import corpus
from harness.megakernel.configs import PRESETS, TARGETS, ScheduleConfig
from harness.megakernel.lowering import lower
from harness.megakernel.validator import validate

SMALL_TASKS = 16
LARGEST = ScheduleConfig(num_sms=132, gemv_tile=128, lm_head_tile=256, attn_heads_per_task=4,
                         sm_policy="load_balance", paging="graph_color")


def _rate(docs: list, repeats: int) -> float:
    """Schedules per second on this core: best of ``repeats`` passes (CPU time of this process,
    so other processes on the machine do not count against it)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        for doc in docs:
            validate(doc)
        best = min(best, time.process_time() - started)
    return len(docs) / best if best > 0 else float("inf")


def calibration_us(repeats: int = 5) -> float:
    """CPU time of a fixed pure-Python workload (sum(range(1000)), best of ``repeats``), recorded
    next to the rates so a reader can tell a slow or contended machine from a slow validator. An
    idle modern core runs it in roughly 8-10 us under CPython 3.11."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        for _ in range(200):
            sum(range(1000))
        best = min(best, (time.process_time() - started) / 200)
    return best * 1e6


def _tasks(doc) -> int:
    tasks = doc.get("tasks") if isinstance(doc, dict) else None
    return len(tasks) if isinstance(tasks, list) else 0


def corpus_rates(seed: int, size: int, repeats: int = 5) -> dict:
    """Rates on two chunks of the corpus (a quarter of it): schedules of at most SMALL_TASKS
    tasks, at most 32 tasks, and all of them."""
    docs = [item.doc for chunk in (0, 1) for item in corpus.build_chunk(seed, size, chunk)]
    small = [d for d in docs if _tasks(d) <= SMALL_TASKS]
    medium = [d for d in docs if _tasks(d) <= 32]
    return {"small_per_s": _rate(small, repeats), "small_n": len(small), "small_max_tasks": SMALL_TASKS,
            "small_mean_tasks": sum(map(_tasks, small)) / max(1, len(small)),
            "upto32_per_s": _rate(medium, 2), "upto32_n": len(medium),
            "upto32_mean_tasks": sum(map(_tasks, medium)) / max(1, len(medium)),
            "mixed_per_s": _rate(docs, 1), "mixed_n": len(docs), "mixed_mean_tasks": sum(map(_tasks, docs)) / len(docs),
            "python_calibration_us": calibration_us()}


def largest(repeats: int = 3) -> dict:
    doc = lower(PRESETS["llama-1b"], LARGEST, pos=1000, target=TARGETS["h200"])
    seconds, verdict = float("inf"), None
    for _ in range(repeats):
        started = time.process_time()
        verdict = validate(doc)
        seconds = min(seconds, time.process_time() - started)
    return {"config": f"llama-1b/{LARGEST.name()}", "tasks": len(doc["tasks"]), "seconds": seconds,
            "accepted": verdict.ok}
