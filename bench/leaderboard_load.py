"""How long the leaderboard takes to load 100,000 records (the target is under 2 s).

    python bench/leaderboard_load.py [--records 100000] [--files 50] [--source-bytes 3000] [--app]

Synthesises run files shaped like real ones (a candidate source of a few KB, a refinement
transcript, provenance and usage in every record) in a temporary folder, then times the app's
load path (``leaderboard.data.load_frame``), the standard-library fallback reader, and the
ranking computation. The load is timed cold (every run file parsed) and warm (from the column
cache that ``load_frame`` keeps per run file). With ``--app`` it also times one full render of the app (Streamlit's AppTest).
The synthetic records are random; nothing here is a result.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.records.results import SCHEMA, RunWriter, details_path, run_file_name, split_details, utc_now  # noqa: E402

GENERATORS = [("reference", None), ("inductor", None), ("direct", "gpt-4o"), ("kforge", "o3"), ("mkevolve", "o3")]
STATUSES = ["ok"] * 6 + ["incorrect", "compile_error", "runtime_error", "timeout"]


def fake_source(rng: random.Random, size: int) -> str:
    body = "\n".join(f'    acc{i} = tl.load(x_ptr + offsets * {rng.randint(1, 9)}, mask=mask, other=0.0)  # "q"'
                     for i in range(size // 70))
    return f"import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef kernel(x_ptr, n):\n{body}\n"


def fake_record(rng: random.Random, run_id: str, generator: str, model, index: int, source_bytes: int) -> dict:
    level = 1 + index % 3
    status = rng.choice(STATUSES)
    correct = status == "ok"
    speedup = rng.lognormvariate(0.0, 0.6) if correct else None
    flags = ["timer_mismatch"] if correct and rng.random() < 0.02 else []
    return {
        "run_id": run_id, "problem_id": f"L{level}/{index % 100 + 1}_Problem{index % 100 + 1}",
        "suite": "kernelbench", "level": level, "problem": f"{index % 100 + 1}_Problem",
        "generator": generator, "provider": "openai" if model else None, "model": model,
        "attempt": index // 300, "candidate_sha": f"{rng.getrandbits(64):016x}", "status": status,
        "correct": correct, "reason": "" if correct else "max abs error 0.5 at [0, 3]", "flags": flags,
        "remarks": [], "device": "cuda", "precision": "fp32", "size": "full",
        "candidate_ms": 1.0 / speedup if speedup else None, "candidate_ms_iqr": 0.01, "candidate_ms_ci": [0.9, 1.1],
        "candidate_n": 100, "eager_ms": 1.0, "compile_ms": 0.8, "speedup": speedup,
        "speedup_compile": 0.8 * speedup if speedup else None, "flops": 1e9, "bytes": 4e8,
        "sol_ms": 0.05, "sol_fraction": 0.05 * speedup if speedup else None, "degenerate": False, "weights_loaded": 2,
        "usage": {"input_tokens": rng.randint(500, 5000), "cached_input_tokens": 0, "output_tokens": rng.randint(200, 3000),
                  "reasoning_tokens": 0, "cost_usd": rng.random() / 20, "estimated": False},
        "candidate_source": fake_source(rng, source_bytes),
        "transcript": [{"step": s, "verdict": rng.choice(["compile_error", "incorrect", "ok"]),
                        "feedback": "error: " + "x" * 200} for s in range(3)],
        "provenance": {"prompt_sha": "abc123", "temperature": 0.7, "submodules": ["load", "compute"]},
        "checks": {"trials": 5, "max_abs_err": 1e-6, "max_rel_err": 1e-5, "mismatch": None},
        "time": utc_now(), "elapsed_s": rng.random() * 10,
    }


def synthesise(folder: Path, records: int, files: int, source_bytes: int) -> tuple[int, int]:
    """Write ``records`` records over ``files`` run files; returns the bytes of run and details files."""
    rng, per_file, written, detailed = random.Random(0), records // files, 0, 0
    for number in range(files):
        generator, model = GENERATORS[number % len(GENERATORS)]
        run_id = f"20250101T{number:06d}Z-bench"
        path = folder / "runs" / run_file_name(run_id, "kernelbench", generator)
        header = {"run_id": run_id, "provenance": {"device": "NVIDIA H200" if number % 2 else "NVIDIA A100"},
                  "config": {"suite": "kernelbench", "generator": generator, "precision": "fp32"}}
        RunWriter(path, header)  # the header exactly as a real run writes it
        lines, details = [], []
        for i in range(per_file):  # split as RunWriter.append splits: bulky fields to the details file
            light, bulky = split_details(fake_record(rng, run_id, generator, model, i, source_bytes))
            lines.append(json.dumps({"type": "record", **light}))
            details += [json.dumps(bulky)] if bulky else []
        with open(details_path(path), "a") as handle:  # one write instead of 2,000 fsyncs; the same bytes
            handle.write("\n".join(details) + "\n")
        with open(path, "a") as handle:
            handle.write("\n".join(lines) + "\n")
        written += path.stat().st_size
        detailed += details_path(path).stat().st_size
    assert SCHEMA.startswith("crucible.run/")
    return written, detailed


def timed(label: str, function, *args):
    """Wall time (what a reader waits) and this process's CPU time (all threads; less sensitive
    to other work on a shared machine)."""
    started, cpu = time.perf_counter(), time.process_time()
    value = function(*args)
    seconds = time.perf_counter() - started
    print(f"{label:<48} {seconds:7.2f} s wall {time.process_time() - cpu:7.2f} s CPU")
    return value, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--source-bytes", type=int, default=3000)
    parser.add_argument("--app", action="store_true", help="also time one full render with Streamlit's AppTest")
    args = parser.parse_args()
    from leaderboard import data, tables

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        size, detail_size = synthesise(folder, args.records, args.files, args.source_bytes)
        print(f"{args.records:,} records in {args.files} run files, {size / 1e6:.0f} MB "
              f"(+ {detail_size / 1e6:.0f} MB of sources and transcripts in their details files); "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        os.environ["CRUCIBLE_CACHE"] = str(folder / "cache")
        loaded, seconds = timed("load_frame, cold (no column cache)", data.load_frame, folder, False)
        assert len(loaded.frame) == args.records and not loaded.warnings, loaded.warnings
        timed("load_frame, first load (fills the column cache)", data.load_frame, folder)
        _, warm = timed("load_frame, from the column cache", data.load_frame, folder)
        timed("standard-library reader (fallback path)", lambda: [data._read_columns_python(p)
                                                                 for p in sorted(folder.rglob("*.jsonl"))])
        timed("rankings for every board (no intervals)", tables.leaderboard, loaded.frame)
        timed("rankings with bootstrap intervals", tables.leaderboard, loaded.frame, "eager", True)
        if args.app:
            timed("app: one full render (AppTest)", render_app, folder)
        print(f"RESULT load_frame {args.records:,} records: {seconds:.2f} s cold, {warm:.2f} s cached (target < 2 s)")
        return 0 if seconds < 2.0 else 1


def render_app(folder: Path) -> None:
    from streamlit.testing.v1 import AppTest

    os.environ["CRUCIBLE_RESULTS"] = str(folder)
    app = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "leaderboard" / "app.py"),
                            default_timeout=120).run()
    assert not app.exception, app.exception


if __name__ == "__main__":
    raise SystemExit(main())
