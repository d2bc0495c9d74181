"""A small synthetic results folder written through harness.records.results.RunWriter, shared by the
leaderboard tests (conftest.py and the tests import it). Numbers are chosen so that ranks and
rates can be checked by hand."""

from __future__ import annotations

import json
from pathlib import Path

from harness.records.results import RunWriter

H200 = "NVIDIA H200"
L1 = [f"L1/{i}_Op{i}" for i in range(1, 5)]   # 4 problems
L2 = [f"L2/{i}_Fused{i}" for i in range(1, 4)]  # 3 problems

MEGAKERNEL_SUMMARY = {
    "confusion": {"tp": 40, "tn": 50, "fp": 0, "fn": 3},
    "per_class": {
        "cycle": {"total": 10, "rejected": 10, "accepted": 0},
        "raw_race": {"total": 20, "rejected": 19, "accepted": 1},
        "safe": {"total": 53, "rejected": 3, "accepted": 50},
    },
    "search_trajectory": [{"iteration": i, "best_cost": 10.0 / (i + 1)} for i in range(6)],
    "throughput": {"small_per_s": 19000.0, "small_mean_tasks": 6.0, "mixed_per_s": 6500.0, "mixed_mean_tasks": 25.0},
}


def header(generator: str, run_id: str, device: str = H200, **extra) -> dict:
    return {
        "run_id": run_id,
        "provenance": {"device": device, "device_kind": "cuda", "torch": "2.11", "harness": "0.1.0"},
        "config": {"suite": "kernelbench", "generator": generator, "precision": "fp32", "size": "full"},
        **extra,
    }


def record(problem_id: str, generator: str, model: str | None = None, correct: bool = True,
           speedup: float | None = 1.0, attempt: int = 0, **extra) -> dict:
    level = int(problem_id[1])
    return {
        "problem_id": problem_id, "suite": "kernelbench", "level": level,
        "problem": problem_id.split("/")[1], "generator": generator, "model": model,
        "provider": "builtin" if model else None, "attempt": attempt,
        "status": "ok" if correct else "incorrect", "correct": correct, "reason": "" if correct else "mismatch",
        "flags": [], "remarks": [], "device": "cuda", "precision": "fp32", "size": "full",
        "candidate_ms": 1.0 / speedup if speedup else None, "eager_ms": 1.0, "compile_ms": 0.8,
        "speedup": speedup if correct else None,
        "speedup_compile": (0.8 * speedup) if (correct and speedup) else None,
        "sol_fraction": 0.25 * speedup if (correct and speedup) else None,
        # timing intervals 5% either side: wide enough to matter at 1.0x, narrow enough for 1.2x to win
        "speedup_ci": [0.95 * speedup, 1.05 * speedup] if (correct and speedup) else None,
        "speedup_compile_ci": [0.76 * speedup, 0.84 * speedup] if (correct and speedup) else None,
        "eager_ms_ci": [0.98, 1.02], "compile_ms_ci": [0.78, 0.82],
        "candidate_source": f"class ModelNew:  # {generator} {problem_id} attempt {attempt}\n    pass\n",
        **extra,
    }


def usage(tokens_in: int, tokens_out: int, cost: float) -> dict:
    return {"input_tokens": tokens_in, "output_tokens": tokens_out, "cost_usd": cost}


def write_inductor(runs: Path) -> None:
    """Non-LLM baseline: everything correct at 1.2x eager, no usage."""
    writer = RunWriter(runs / "20250101T000000Z-a_kernelbench_inductor.jsonl", header("inductor", "run-inductor"))
    for problem in L1 + L2:
        writer.append(record(problem, "inductor", speedup=1.2))


def write_direct(runs: Path) -> None:
    """Direct synthesis, 3 samples per problem: L1 problems 1-3 correct (best 2.0x), 4 never."""
    writer = RunWriter(runs / "20250102T000000Z-b_kernelbench_direct.jsonl", header("direct", "run-direct"))
    for number, problem in enumerate(L1 + L2, 1):
        for attempt in range(3):
            correct = problem in L1[:3] and attempt >= 1
            writer.append(record(problem, "direct", "gpt-test", correct=correct, speedup=1.0 + attempt / 2,
                                 attempt=attempt, usage=usage(1000, 500, 0.01)))


def write_kforge(runs: Path) -> None:
    """Refinement with transcripts; its L1/1 result is flagged below_sol (so never ranked)."""
    writer = RunWriter(runs / "20250103T000000Z-c_kernelbench_kforge.jsonl", header("kforge", "run-kforge"))
    for problem in L1 + L2:
        steps = [
            {"step": 0, "verdict": "compile_error"},
            {"step": 1, "verdict": "incorrect"},
            {"step": 2, "verdict": "ok", "speedup": 1.1},
            {"step": 3, "verdict": "ok", "speedup": 1.6},
        ]
        flags = ["below_sol"] if problem == L1[0] else []
        writer.append(record(problem, "kforge", "gpt-test", speedup=1.6, flags=flags, transcript=steps,
                             usage=usage(4000, 2000, 0.05)))


def write_mkevolve(runs: Path) -> None:
    writer = RunWriter(runs / "20250104T000000Z-d_kernelbench_mkevolve.jsonl", header("mkevolve", "run-mkevolve"))
    for problem in L1 + L2:
        writer.append(record(problem, "mkevolve", "gpt-test", speedup=1.4, usage=usage(2500, 1500, 0.02),
                             provenance={"submodules": ["load", "compute", "store"]}))


def write_imported(runs: Path) -> None:
    writer = RunWriter(runs / "imported" / "20240601T000000Z-u_kernelbench_upstream.jsonl",
                       header("upstream-published", "run-upstream", imported=True))
    for problem in L1:
        writer.append(record(problem, "upstream-published", "some-llm", speedup=3.0, imported=True))


def build_results(root: Path, megakernel: bool = True) -> Path:
    runs = root / "runs"
    for write in (write_inductor, write_direct, write_kforge, write_mkevolve, write_imported):
        write(runs)
    if megakernel:
        (root / "megakernel").mkdir(parents=True, exist_ok=True)
        (root / "megakernel" / "summary.json").write_text(json.dumps(MEGAKERNEL_SUMMARY))
    return root
