"""The megakernel suite's parts, each adding its section to one summary dict.

Used by ``pytest suites/megakernel`` (one part per fixture), ``python -m harness schedules --corpus``
and bench/megakernel_bench.py, so the figures come from one code path.
"""

from __future__ import annotations

import hashlib
import time

from harness.megakernel import labelling, report, throughput, vmcheck
from harness.megakernel.configs import ModelConfig, ScheduleConfig

VM_MODELS = {
    "tiny": ModelConfig(hidden=8, layers=1, heads=2, kv_heads=1, head_dim=4, intermediate=16, vocab=16, max_seq=16),
    "gqa2": ModelConfig(hidden=16, layers=2, heads=4, kv_heads=2, head_dim=4, intermediate=32, vocab=32, max_seq=16),
    "mha": ModelConfig(hidden=16, layers=2, heads=2, kv_heads=2, head_dim=8, intermediate=24, vocab=24,
                       rope_theta=500000.0, max_seq=16),
}
VM_SCHEDULES = [
    ScheduleConfig(num_sms=1),
    ScheduleConfig(num_sms=3, gemv_tile=4, lm_head_tile=8, silu_tile=8, attn_heads_per_task=1),
    ScheduleConfig(num_sms=4, gemv_tile=2, attn_heads_per_task=1, sm_policy="load_balance", paging="graph_color"),
    ScheduleConfig(num_sms=2, gemv_tile=4, sm_policy="spread", paging="graph_color", smem_local=True),
]


def corpus_part(summary: dict, seed: int, size: int, workers: int | None = None) -> list[dict]:
    started = time.perf_counter()
    chunks = labelling.label_corpus(seed, size, workers)
    rows = [row for chunk in chunks for row in chunk["rows"]]
    validate_s = sum(c["validate_s"] for c in chunks)
    summary["corpus"] = {
        "seed": seed, "size": len(rows), "chunks": len(chunks),
        "digest": hashlib.sha256("".join(c["digest"] for c in chunks).encode()).hexdigest(),
        "by_source": _count(rows, "source"), "classes": len({r["cls"] for r in rows}),
        "oracle": {"max_states": labelling.MAX_STATES, "sampled_runs": labelling.SAMPLED_RUNS,
                   "modes": _count(rows, "mode"), "max_states_seen": max((r["states"] for r in rows if r["mode"] == "exhaustive"), default=0)},
        "label_wall_s": time.perf_counter() - started, "oracle_s": sum(c["oracle_s"] for c in chunks),
        "validate_cpu_s": validate_s, "validate_per_cpu_s": len(rows) / validate_s if validate_s else None,
    }
    summary["confusion"] = report.by_mode(rows)
    summary["per_class"] = report.per_class(rows)
    summary["disagreements"] = report.disagreements(rows)
    summary["family_agreement"] = report.family_agreement(rows)
    return rows


def _count(rows: list[dict], key: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row[key]] = counts.get(row[key], 0) + 1
    return counts


def throughput_part(summary: dict, seed: int, size: int) -> dict:
    rates = throughput.corpus_rates(seed, size)
    rates["largest"] = throughput.largest()
    summary["throughput"] = rates
    return rates


def vm_part(summary: dict, steps: int = 4) -> list[vmcheck.Agreement]:
    results = [vmcheck.check(model, sched, steps=steps, prompt=(1, 5, 2), seed=index)
               for index, (model, sched) in enumerate((m, s) for m in VM_MODELS.values() for s in VM_SCHEDULES)]
    summary["vm"] = {
        "cases": [{"model": r.model, "schedule": r.schedule, "steps": r.steps, "positions": r.positions,
                   "max_abs_err": r.max_abs_err, "logits_ok": r.logits_ok, "tokens_equal": r.tokens_equal,
                   "tokens": r.tokens, "ok": r.ok} for r in results],
        "lowerings": sum(r.steps for r in results), "models": len(VM_MODELS), "schedules": len(VM_SCHEDULES),
        "configs": len(results), "positions": sorted({p for r in results for p in r.positions}),
        "max_abs_err": max(r.max_abs_err for r in results), "all_ok": all(r.ok for r in results),
        "atol": vmcheck.ATOL, "rtol": vmcheck.RTOL,
    }
    return results


def search_part(summary: dict, model: str = "tiny", budget: int = 12, seed: int = 0):
    from harness.registry import create

    generator = create("generator", "schedule-search", budget=budget, seed=seed)
    search = generator.search(model)
    ranked = search.ranked()
    summary["search"] = {
        "model": model, "budget": budget, "evaluated": len(search.history),
        "statuses": _count([{"s": e.status} for e in search.history], "s"), "kept": len(ranked),
        "ranked_by": "gpu_us" if search.measure else "makespan_us",
        "best": [{"config": e.config.name(), "origin": e.origin, "makespan_us": e.makespan_us,
                  "gpu_us": e.cost.get("gpu_us"),
                  "max_sm_bytes": e.cost["max_sm_bytes"], "vm_max_abs_err": e.vm_max_abs_err} for e in ranked[:5]],
        # every candidate in the order the search tried it, for the leaderboard's trajectory figure
        "trajectory": [{"iteration": i, "status": e.status, "origin": e.origin,
                        "makespan_us": e.makespan_us if e.status == "kept" else None}
                       for i, e in enumerate(search.history)],
    }
    return search


def executor_part(summary: dict, steps: int = 4) -> dict:
    """On a GPU: every shipped lowering decoded by the persistent megakernel against eager and the VM,
    and the safety demonstration (rejected schedules run with checks off in a sandbox)."""
    from harness.megakernel import executor_check, executor_safety

    decodes = [executor_check.decode(m, s, steps=steps, device="cuda").to_dict()
               for m in VM_MODELS.values() for s in VM_SCHEDULES]
    model = VM_MODELS["gqa2"]
    outcomes = executor_safety.run_sandboxed(model, executor_safety.cases(model, VM_SCHEDULES[1:]), device="cuda")
    section = {"decodes": decodes, "all_ok": all(d["ok"] for d in decodes),
               "max_err_eager": max(d["max_err_eager"] for d in decodes),
               "safety": executor_safety.summarize(outcomes), "safety_outcomes": outcomes}
    summary["executor"] = section
    return section

