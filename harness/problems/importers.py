"""Importers: published results from other harnesses as Crucible run files, labelled imported.

Imported records sit beside Crucible's own on the leaderboard and in figures, but are never ranked:
they were judged by another harness, with its own inputs, tolerances and timer.

KernelBench (upstream) writes ``eval_results.json``: problem id -> one entry, a list of entries
(one per sample) or a mapping sample id -> entry, each entry with ``compiled``, ``correctness``,
``runtime`` (mean, ms; -1 when not timed), ``runtime_stats`` and ``metadata``, and in some versions
``ref_runtime``. Its baseline files map ``level<N>`` -> problem file name -> {mean, std, min, max,
num_trials}. Usage::

    python -m harness.problems.importers kernelbench runs/x/eval_results.json --level 1 --generator upstream-x \
        --baseline results/timing/H100/baseline_time_torch.json --hardware "NVIDIA H100"
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any, Iterator

from harness.errors import UserError
from harness.records.results import RunWriter, new_run_id, run_file_name, utc_now

ENTRY_KEYS = ("compiled", "correctness")
UNIT_TO_MS = {"ms": 1.0, "us": 1e-3, "s": 1e3}
LEADING_NUMBER = re.compile(r"(\d+)")
REASON_KEYS = ("compilation_error", "runtime_error", "correctness_issue", "cuda_error", "other_error", "error")


def read_json(path: str | Path, what: str) -> Any:
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UserError(f"{path}: {what} not found; check the path") from None
    except json.JSONDecodeError as error:
        raise UserError(f"{path}: {what} is not valid JSON ({error}); pass the file KernelBench wrote") from None


def is_entry(value: Any) -> bool:
    return isinstance(value, dict) and any(key in value for key in ENTRY_KEYS)


def iter_eval_entries(results: Any) -> Iterator[tuple[str, int, dict]]:
    """(problem key, sample id, entry) for every sample in any of the eval-results layouts."""
    if not isinstance(results, dict):
        raise UserError("KernelBench eval results must be a JSON object mapping problem ids to results")
    for key, value in results.items():
        if is_entry(value):
            yield str(key), int(value.get("sample_id", 0) or 0), value
        elif isinstance(value, list):
            for index, entry in enumerate(v for v in value if is_entry(v)):
                yield str(key), int(entry.get("sample_id", index) or 0), entry
        elif isinstance(value, dict):
            for sample, entry in value.items():
                if is_entry(entry):
                    yield str(key), _int_or(sample, entry.get("sample_id", 0)), entry


def _int_or(text: Any, default: Any) -> int:
    match = LEADING_NUMBER.match(str(text))
    return int(match.group(1)) if match else int(default or 0)


def problem_number(key: str) -> int | None:
    """``"12"``, ``"12_Gemm.py"``, ``"level1/12_Gemm.py"`` -> 12."""
    match = LEADING_NUMBER.match(Path(str(key)).name)
    return int(match.group(1)) if match else None


def baseline_table(baselines: Any, level: int) -> dict[int, tuple[str, dict]]:
    """Problem number -> (file stem, timing stats) for one level of a KernelBench baseline file."""
    if not isinstance(baselines, dict):
        raise UserError("KernelBench baseline file must be a JSON object ({'level1': {file: stats}})")
    section = None
    for key in (f"level{level}", f"level_{level}", str(level)):
        if isinstance(baselines.get(key), dict):
            section = baselines[key]
            break
    if section is None and any(str(k).endswith(".py") for k in baselines):
        section = baselines  # a single level, not nested
    if section is None:
        raise UserError(f"baseline file has no 'level{level}' section (it has {sorted(baselines)[:5]}); "
                        f"pass the matching --level or the right baseline file")
    table = {}
    for name, stats in section.items():
        number = problem_number(name)
        if number is not None and isinstance(stats, dict):
            table[number] = (Path(name).stem, stats)
    return table


def positive_ms(value: Any, unit: float) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number * unit if number > 0 else None


def entry_status(entry: dict) -> str:
    if not entry.get("compiled", True):
        return "compile_error"
    if entry.get("correctness"):
        return "ok"
    metadata = entry.get("metadata") or {}
    return "runtime_error" if "runtime_error" in metadata else "incorrect"


def entry_reason(entry: dict, limit: int = 300) -> str:
    metadata = entry.get("metadata") or {}
    for key in REASON_KEYS:
        if metadata.get(key):
            text = str(metadata[key])
            return f"{key}: {text[:limit]}" + (" ..." if len(text) > limit else "")
    return ""


def import_record(key: str, sample: int, entry: dict, level: int, generator: str, model: str | None,
                  baselines: dict[int, tuple[str, dict]], baseline_kind: str, unit: float) -> dict:
    """One upstream entry as a Crucible record (imported, never ranked)."""
    number = problem_number(key)
    stem, stats = baselines.get(number, (Path(key).stem, {}))
    candidate_ms = positive_ms(entry.get("runtime"), unit)
    reference_ms = positive_ms(stats.get("mean"), 1.0) or positive_ms(entry.get("ref_runtime"), unit)
    correct = bool(entry.get("correctness"))
    speedup = reference_ms / candidate_ms if (correct and candidate_ms and reference_ms) else None
    record = {
        "problem_id": f"L{level}/{stem}", "suite": "kernelbench", "level": level, "problem": stem,
        "generator": generator, "provider": "imported", "model": model, "attempt": sample,
        "status": entry_status(entry), "correct": correct, "compiled": bool(entry.get("compiled", False)),
        "reason": entry_reason(entry), "flags": [], "remarks": ["imported: KernelBench eval results",
                                                              "timing: upstream mean, not median"],
        "imported": True, "candidate_ms": candidate_ms,
        "candidate_n": (entry.get("runtime_stats") or {}).get("num_trials"),
        "speedup": None, "speedup_compile": None, "eager_ms": None, "compile_ms": None,
        "provenance": {"upstream_key": key, "sample_id": sample, "metadata": entry.get("metadata") or {}},
    }
    prefix = "compile" if baseline_kind == "compile" else "eager"
    record[f"{prefix}_ms"] = reference_ms
    record["speedup_compile" if prefix == "compile" else "speedup"] = speedup
    return record


def guess_baseline_kind(path: str | Path | None) -> str:
    return "compile" if path and "compile" in Path(path).name else "eager"


def import_kernelbench(eval_path: str | Path, *, level: int, generator: str, baseline_path: str | Path | None = None,
                       model: str | None = None, hardware: str | None = None, baseline_kind: str | None = None,
                       time_unit: str = "ms", out_dir: str | Path = "results/runs/imported") -> Path:
    """Write one imported run file from a KernelBench eval-results file (and its baseline); return its path."""
    if time_unit not in UNIT_TO_MS:
        raise UserError(f"--time-unit {time_unit!r} is not one of {sorted(UNIT_TO_MS)}")
    kind = baseline_kind or guess_baseline_kind(baseline_path)
    baselines = baseline_table(read_json(baseline_path, "baseline file"), level) if baseline_path else {}
    entries = list(iter_eval_entries(read_json(eval_path, "eval results file")))
    if not entries:
        raise UserError(f"{eval_path}: no entries with 'compiled'/'correctness' found; is this eval_results.json?")
    run_id = new_run_id()
    path = Path(out_dir) / run_file_name(run_id, "kernelbench", generator)
    if path.exists():
        raise UserError(f"{path} exists; run files are append-only, import again for a new run id")
    writer = RunWriter(path, _header(run_id, generator, hardware, eval_path, baseline_path, kind))
    for key, sample, entry in sorted(entries, key=lambda item: (problem_number(item[0]) or 0, item[1])):
        writer.append(import_record(key, sample, entry, level, generator, model, baselines, kind,
                                    UNIT_TO_MS[time_unit]))
    return path


def _header(run_id: str, generator: str, hardware: str | None, eval_path, baseline_path, kind: str) -> dict:
    return {
        "run_id": run_id,
        "imported": True,
        "provenance": {
            "device": hardware or "unknown (imported)", "device_kind": "cuda", "source": "KernelBench eval results",
            "eval_file": Path(eval_path).name, "baseline_file": Path(baseline_path).name if baseline_path else None,
            "baseline_kind": kind, "imported_at": utc_now(),
        },
        "config": {"suite": "kernelbench", "generator": generator, "precision": "fp32", "size": "full",
                   "device": "cuda", "seeds": "upstream"},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.problems.importers", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    kb = commands.add_parser("kernelbench", help="import an upstream KernelBench eval_results.json")
    kb.add_argument("eval_file")
    kb.add_argument("--level", type=int, required=True, help="KernelBench level of the results (1-3)")
    kb.add_argument("--generator", required=True, help="name shown on the leaderboard, e.g. upstream-o1")
    kb.add_argument("--baseline", help="upstream baseline timing file (default: use ref_runtime if present)")
    kb.add_argument("--baseline-kind", choices=["eager", "compile"], help="default: 'compile' if the file name says so")
    kb.add_argument("--model")
    kb.add_argument("--hardware", help="device name the results were measured on")
    kb.add_argument("--time-unit", default="ms", help="unit of 'runtime' in the file (default: ms)")
    kb.add_argument("--out", default="results/runs/imported", help="folder for the run file (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        path = import_kernelbench(args.eval_file, level=args.level, generator=args.generator,
                                  baseline_path=args.baseline, model=args.model, hardware=args.hardware,
                                  baseline_kind=args.baseline_kind, time_unit=args.time_unit, out_dir=args.out)
    except UserError as error:
        print(f"error: {error}")
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
