"""How many shipped problems the builtin writer solves: write each kernel from the problem's full-size
source (as a prompt carries it), then check it at the small size on the CPU (Triton interpreter),
fp32, atol = rtol = 1e-4, weights shared by state_dict as the harness does.

    TRITON_INTERPRET=1 python bench/builtin_survey.py suites/kernelbench/level1 suites/kernelbench/level2 -j 2

Prints one line per problem (written / no rule / correct / mismatch / error) and a summary table.
This is a quick survey, not the harness: the real verdicts come from ``python -m harness``.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import signal
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

if __name__ == "__main__":  # the survey runs kernels on the CPU; builtin_gpu.py imports compare() only
    os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compare(expected, got) -> tuple[bool, float]:
    import torch

    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    worst, ok = 0.0, len(expected) == len(got)
    for e, g in zip(expected, got):
        if e.shape != g.shape:
            return False, float("inf")
        if e.numel():
            diff = (e.double() - g.double()).abs().max().item()
            if not math.isnan(worst) and (math.isnan(diff) or diff > worst):  # (max() would drop a NaN)
                worst = diff
        ok = ok and torch.allclose(e.double(), g.double(), atol=1e-4, rtol=1e-4)
    return ok, worst


def check(path: str, timeout: int, variant: str = "default") -> tuple[str, str, str, float]:
    """(problem, verdict, detail, seconds) for one problem file."""
    import torch

    from submitters.builtin.ir import NoRule
    from submitters.builtin.writer import write
    from harness.llm.prompts import strip_metadata
    from harness.problems.problem import load_problem

    started = time.time()
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("timeout")))
    signal.alarm(timeout)
    name = Path(path).stem
    try:
        written = write(strip_metadata(Path(path).read_text()), variant)
    except NoRule as error:
        return name, "no rule", error.what, time.time() - started
    try:
        problem = load_problem(path, size="small")
        folder = Path(tempfile.mkdtemp(prefix="builtin-survey-"))
        (folder / "reference.py").write_text(problem.source)
        (folder / "candidate.py").write_text(written.source)
        reference = _import(folder / "reference.py", f"ref_{name}")
        candidate = _import(folder / "candidate.py", f"cand_{name}")
        init = reference.get_init_inputs()
        torch.manual_seed(0)
        model = reference.Model(*init)
        torch.manual_seed(0)
        new = candidate.ModelNew(*init)
        new.load_state_dict(model.state_dict(), strict=False)
        torch.manual_seed(1)
        inputs = reference.get_inputs()
        with torch.no_grad():
            expected = model(*inputs)
            got = new(*inputs)
        ok, worst = compare(expected, got)
        verdict = "correct" if ok else "mismatch"
        return name, verdict, f"max abs err {worst:.3g}; {len(written.kernels)} kernel(s)", time.time() - started
    except Exception as error:  # the survey reports every failure and goes on
        return name, "error", f"{type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}", \
            time.time() - started
    finally:
        signal.alarm(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", help="problem folders or files")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=120, help="seconds per problem (default 120)")
    parser.add_argument("--variant", default="default", help="default, conservative, wide or narrow")
    args = parser.parse_args()
    files = []
    for entry in args.folders:
        entry = Path(entry)
        files += sorted(entry.glob("[0-9]*.py"), key=lambda p: int(p.name.split("_")[0])) if entry.is_dir() else [entry]
    counts: dict[tuple[str, str], int] = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [(f, pool.submit(check, str(f), args.timeout, args.variant)) for f in files]
        for file, future in futures:
            name, verdict, detail, seconds = future.result()
            level = file.parent.name
            counts[(level, verdict)] = counts.get((level, verdict), 0) + 1
            print(f"{level}/{name:60s} {verdict:9s} {seconds:6.1f}s  {detail}", flush=True)
    print("\nlevel    correct  mismatch  error  no-rule  total")
    for level in sorted({level for level, _ in counts}):
        row = [counts.get((level, v), 0) for v in ("correct", "mismatch", "error", "no rule")]
        print(f"{level:8s} {row[0]:7d} {row[1]:9d} {row[2]:6d} {row[3]:8d} {sum(row):6d}")


if __name__ == "__main__":
    main()
