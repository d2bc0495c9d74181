"""Where a `reference` baseline's sessions wait for workers: the candidate's, eager's and compile's
phases (the records' ``phases_s``) over a few problems, spare workers on.

    python bench/spare_pool_phases.py [--device cpu|cuda] [--size small|full] [--problems 3]

The compile baseline starts the next problem's three workers beside its long untimed load and
compile (evaluate.SPARES_AHEAD_OF_COMPILE), so from the second problem on neither the candidate's
nor eager's ``timing`` phase includes a worker's start-up. On the CPU it runs the test fixtures
(torch.compile builds C++ there: about 20 s a problem); on CUDA, the first problems of Level 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def problems(device: str, size: str, count: int) -> list:
    from harness.problem import load_problem
    from harness.suite import load_selected

    if device == "cpu":
        folder = ROOT / "tests" / "fixtures" / "problems"
        files = sorted(folder.glob("*.py"))
        return [load_problem(files[n % len(files)], size="small", level=1) for n in range(count)]
    return load_selected(size, levels=[1])[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--size", default="small", choices=("small", "full"))
    parser.add_argument("--problems", type=int, default=3)
    args = parser.parse_args()
    os.environ["CRUCIBLE_SPARE_WORKER"] = "1"
    if args.device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    from harness.evaluate import EvalCache, EvalOptions, evaluate

    opts = EvalOptions(device=args.device, size=args.size, trials=2, compile_baseline="on")
    cache = EvalCache()
    print("problem | elapsed s | candidate timing s | eager timing s | compile load s | compile timing s")
    for number, problem in enumerate(problems(args.device, args.size, args.problems)):
        cache.baselines.clear()  # the fixtures repeat on the CPU: every problem measures its baselines
        started = time.perf_counter()
        record = evaluate(problem, problem.source + "\n\nModelNew = Model\n", opts, cache, baseline=True,
                          identity={"generator": "reference"})
        phases = record["phases_s"]
        print(f"{number + 1}. {problem.id} ({record['status']}) | {time.perf_counter() - started:.2f} | "
              f"{phases['candidate'].get('timing', 0):.3f} | {phases['eager'].get('timing', 0):.3f} | "
              f"{phases['compile'].get('load', 0):.2f} | {phases['compile'].get('timing', 0):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
