"""Validator throughput: small schedules of the corpus, the whole corpus, the largest lowering."""

from __future__ import annotations

import time

from harness.megakernel import corpus
from harness.megakernel.configs import PRESETS, TARGETS, ScheduleConfig
from harness.megakernel.lowering import lower
from harness.megakernel.validator import validate

SMALL_TASKS = 32
LARGEST = ScheduleConfig(num_sms=132, gemv_tile=128, lm_head_tile=256, attn_heads_per_task=4,
                         sm_policy="load_balance", paging="graph_color")


def _rate(docs: list, repeats: int) -> float:
    """Schedules per second on this core: best of ``repeats`` passes (CPU time of this process)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        for doc in docs:
            validate(doc)
        best = min(best, time.process_time() - started)
    return len(docs) / best if best > 0 else float("inf")


def corpus_rates(seed: int, size: int, repeats: int = 3) -> dict:
    docs = [item.doc for chunk in (0, 1) for item in corpus.build_chunk(seed, size, chunk)]
    small = [d for d in docs if len(d.get("tasks", []) if isinstance(d, dict) else []) <= SMALL_TASKS]
    mean_tasks = sum(len(d["tasks"]) for d in small) / max(1, len(small))
    return {"small_per_s": _rate(small, repeats), "small_n": len(small), "small_mean_tasks": mean_tasks,
            "small_max_tasks": SMALL_TASKS, "mixed_per_s": _rate(docs, 1), "mixed_n": len(docs)}


def largest(repeats: int = 3) -> dict:
    doc = lower(PRESETS["llama-1b"], LARGEST, pos=1000, target=TARGETS["h200"])
    seconds, verdict = float("inf"), None
    for _ in range(repeats):
        started = time.process_time()
        verdict = validate(doc)
        seconds = min(seconds, time.process_time() - started)
    return {"config": f"llama-1b/{LARGEST.name()}", "tasks": len(doc["tasks"]), "seconds": seconds,
            "accepted": verdict.ok}
