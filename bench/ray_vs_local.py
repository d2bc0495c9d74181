"""The Ray executor against the local one on one GPU: speedups that agree, and the wall time Ray adds.

Usage: python bench/ray_vs_local.py --out DIR [--executor local|ray|both] [--generator reference]
                                    [--subset starter] [-- more `python -m harness run` options]

Runs ``python -m harness run --device cuda`` over the selection once per executor, into DIR/local
and DIR/ray (Ray started on this machine, one task per problem on its GPU), timing each run's wall
clock into DIR/<executor>/wall.json; a run whose wall.json exists is not run again, so the two can
be separate calls. Then prints, per problem, both speedups (eager / candidate), their ratio, and
whether the two speedup intervals (from the eager and candidate medians' confidence intervals)
overlap, and the two wall times with Ray's extra in percent.

Without a CUDA device it says so and exits 0. Ray must be importable for the ray run (the GPU image
has none): ``pip install --no-index --find-links wheels ray`` from carried wheels.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    args, extra = _parser().parse_known_args(argv)
    extra = [a for a in extra if a != "--"]
    if not _cuda():
        print("skipped: no CUDA device is visible; this comparison needs one GPU")
        return 0
    executors = ("local", "ray") if args.executor == "both" else (args.executor,)
    if "ray" in executors and not _has_ray():
        print("ray is not installed: pip install --no-index --find-links wheels ray (carried wheels), "
              "or pip install crucible-kernels[ray]", file=sys.stderr)
        return 2
    out = Path(args.out)
    for executor in executors:
        _run(executor, out / executor, args, extra)
    return _report(out)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for both runs and their wall times")
    parser.add_argument("--executor", choices=("local", "ray", "both"), default="both")
    parser.add_argument("--generator", default="reference")
    parser.add_argument("--subset", default="starter")
    return parser


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _has_ray() -> bool:
    from importlib.util import find_spec

    return find_spec("ray") is not None


def _run(executor: str, folder: Path, args, extra: list[str]) -> None:
    wall_file = folder / "wall.json"
    if wall_file.exists():
        print(f"{executor}: already measured ({wall_file})")
        return
    command = [sys.executable, "-m", "harness", "run", "--device", "cuda", "--generator", args.generator,
               "--subset", args.subset, "--runs-dir", str(folder), "--executor", executor, *extra]
    print(" ".join(command), flush=True)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{executor}: python -m harness run exited {done.returncode}; wall time not kept")
    wall_file.write_text(json.dumps({"executor": executor, "wall_s": round(wall, 2), "command": command}))


def _records(folder: Path) -> dict[str, dict]:
    from harness.records.results import load_records

    files = sorted(folder.glob("*.jsonl"))
    return {r["problem_id"]: r for r in load_records(files)} if files else {}


def _interval(record: dict) -> tuple[float, float] | None:
    eager, candidate = record.get("eager_ms_ci"), record.get("candidate_ms_ci")
    if not eager or not candidate or None in (*eager, *candidate) or min(candidate) <= 0:
        return None
    return eager[0] / candidate[1], eager[1] / candidate[0]


def _report(out: Path) -> int:
    local, ray = _records(out / "local"), _records(out / "ray")
    ratios, overlapping, compared = [], 0, 0
    print(f"{'problem':48} {'local':>8} {'ray':>8} {'ray/local':>10}  intervals")
    for problem_id in sorted(set(local) & set(ray)):
        a, b = local[problem_id].get("speedup"), ray[problem_id].get("speedup")
        if not a or not b:
            print(f"{problem_id:48} {a or '-':>8} {b or '-':>8}  (not measured: {local[problem_id]['status']}/{ray[problem_id]['status']})")
            continue
        ia, ib = _interval(local[problem_id]), _interval(ray[problem_id])
        overlap = ia is not None and ib is not None and ia[0] <= ib[1] and ib[0] <= ia[1]
        compared += 1
        overlapping += overlap
        ratios.append(b / a)
        print(f"{problem_id:48} {a:8.3f} {b:8.3f} {b / a:10.3f}  {'overlap' if overlap else 'apart'}")
    if ratios:
        print(f"speedups compared: {compared}; intervals overlapping: {overlapping}/{compared}; "
              f"median |ray/local - 1|: {statistics.median(abs(r - 1) for r in ratios):.3f}; "
              f"geomean ray/local: {math.exp(statistics.fmean(math.log(r) for r in ratios)):.3f}")
    walls = {name: json.loads((out / name / "wall.json").read_text())["wall_s"]
             for name in ("local", "ray") if (out / name / "wall.json").exists()}
    if len(walls) == 2:
        extra = 100 * (walls["ray"] / walls["local"] - 1)
        print(f"wall time: local {walls['local']:.1f} s, ray {walls['ray']:.1f} s ({extra:+.1f}% with Ray)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
