"""Time the builtin writer's kernels against the eager reference on a CUDA GPU.

    python bench/builtin_gpu.py suites/kernelbench/level1 suites/kernelbench/level2 [--size full|small]
        [--variant default] [--budget-s 540] [-k NAME_PART ...]

For each problem file: write ModelNew with the builtin rules from the problem's source (as a
prompt carries it), build Model and ModelNew on the GPU with the same weights, check the outputs
(fp32, atol = rtol = 1e-4, TF32 off), and time both with ``triton.testing.do_bench`` (median ms).
Prints one row per problem and a summary (correct count, geometric-mean speedup over correct).
A quick look for the lead; the real measurement goes through the harness (``python -m harness``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from builtin_survey import compare as _compare  # noqa: E402  (same check: fp32, atol = rtol = 1e-4)


def problem_files(entries: list[str], filters: list[str]) -> list[Path]:
    files: list[Path] = []
    for entry in map(Path, entries):
        if entry.is_dir():
            files += sorted(entry.glob("[0-9]*.py"), key=lambda p: int(p.name.split("_")[0]))
        else:
            files.append(entry)
    return [f for f in files if not filters or any(part in f.stem for part in filters)]


def _to_device(value, device):
    import torch

    return value.to(device) if isinstance(value, torch.Tensor) else value


def measure(path: Path, size: str, variant: str) -> dict:
    """One row: verdict, eager and builtin milliseconds, kernel count."""
    import torch
    from triton.testing import do_bench

    from submitters.builtin.ir import NoRule
    from submitters.builtin.writer import write
    from harness.llm.prompts import strip_metadata
    from harness.problems.problem import load_module, load_problem

    row = {"problem": f"{path.parent.name}/{path.stem}", "verdict": "", "eager_ms": None, "builtin_ms": None,
           "kernels": 0, "detail": ""}
    try:
        written = write(strip_metadata(path.read_text()), variant)
    except NoRule as error:
        row.update(verdict="no rule", detail=error.what[:70])
        return row
    row["kernels"] = len(written.kernels)
    problem = load_problem(path, size=size)
    reference = problem.module()
    candidate = load_module(written.source, f"builtin_bench_{path.stem}_{variant}_{size}")
    init = reference.get_init_inputs()
    torch.manual_seed(0)
    model = reference.Model(*init).cuda()
    torch.manual_seed(0)
    new = candidate.ModelNew(*init).cuda()
    new.load_state_dict(model.state_dict(), strict=False)
    torch.manual_seed(1)
    inputs = [_to_device(x, "cuda") for x in reference.get_inputs()]
    with torch.no_grad():
        ok, worst = _compare(model(*inputs), new(*inputs))
        row.update(verdict="correct" if ok else "mismatch", detail=f"max abs err {worst:.2g}")
        row["eager_ms"] = do_bench(lambda: model(*inputs))
        row["builtin_ms"] = do_bench(lambda: new(*inputs))
    del model, new, inputs
    torch.cuda.empty_cache()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="problem files or folders")
    parser.add_argument("--size", choices=("full", "small"), default="full")
    parser.add_argument("--variant", default="default", help="default, conservative, wide or narrow")
    parser.add_argument("--budget-s", type=float, default=540.0, help="stop starting new problems after this")
    parser.add_argument("-k", dest="filters", action="append", default=[], help="only files whose name has this")
    args = parser.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("skipped: builtin_gpu.py needs a CUDA GPU and none is visible. Use bench/builtin_survey.py on the CPU.")
        return
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  size {args.size}  "
          f"variant {args.variant}")
    print(f"{'problem':64s} {'verdict':9s} {'eager ms':>9s} {'builtin ms':>10s} {'speedup':>8s} {'kernels':>7s}  detail")
    started, rows = time.time(), []
    for path in problem_files(args.paths, args.filters):
        if time.time() - started > args.budget_s:
            print(f"budget of {args.budget_s:.0f} s spent; stopping before {path.name}")
            break
        try:
            row = measure(path, args.size, args.variant)
        except Exception as error:  # one broken problem must not end the table
            row = {"problem": f"{path.parent.name}/{path.stem}", "verdict": "error", "eager_ms": None,
                   "builtin_ms": None, "kernels": 0, "detail": f"{type(error).__name__}: {str(error)[:90]}"}
            torch.cuda.empty_cache()
        rows.append(row)
        _print_row(row)
    _summary(rows)


def _print_row(row: dict) -> None:
    eager, mine = row["eager_ms"], row["builtin_ms"]
    speedup = f"{eager / mine:8.2f}" if eager and mine else f"{'-':>8s}"
    eager_text = f"{eager:9.3f}" if eager else f"{'-':>9s}"
    mine_text = f"{mine:10.3f}" if mine else f"{'-':>10s}"
    print(f"{row['problem'][:64]:64s} {row['verdict']:9s} {eager_text} {mine_text} {speedup} {row['kernels']:7d}  "
          f"{row['detail']}", flush=True)


def _summary(rows: list[dict]) -> None:
    correct = [r for r in rows if r["verdict"] == "correct" and r["eager_ms"] and r["builtin_ms"]]
    speedups = [r["eager_ms"] / r["builtin_ms"] for r in correct]
    geomean = math.exp(sum(map(math.log, speedups)) / len(speedups)) if speedups else float("nan")
    counts = {v: sum(r["verdict"] == v for r in rows) for v in ("correct", "mismatch", "error", "no rule")}
    print(f"\n{len(rows)} problems: " + ", ".join(f"{n} {v}" for v, n in counts.items())
          + f"; geomean speedup over correct {geomean:.3f}; faster than eager: {sum(s > 1 for s in speedups)}")


if __name__ == "__main__":
    main()
