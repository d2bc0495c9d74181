"""Degeneracy probe for the KernelBench Level 2 problem files, at small or full size.

For each problem: build the reference after a fixed seed, run it on one input draw, and ask
whether a cheap fake output would pass `torch.allclose(fake, expected, atol=tol, rtol=tol)`:
  zeros  - an all-zeros tensor,
  const  - a tensor filled with the mean of the expected output,
  other  - the reference's own output on a second, independent input draw (the output does
           not depend on the input at this tolerance).
Each is checked at tol 1e-4 (fp32) and 1e-2 (fp16/bf16). A problem is degenerate if any fake
passes. The column `moved` is the share of output elements that change beyond tolerance 1e-2
between the two input draws: a low share means most of the output ignores the input.
Problems marked EXCLUDE are reported but not counted.

CPU:  python bench/kernelbench_level2_degeneracy.py --size small
      python bench/kernelbench_level2_degeneracy.py --size full --batch-cap 2 --only 8,23
GPU:  python bench/kernelbench_level2_degeneracy.py --size full --device cuda
(--batch-cap lowers batch_size to check per-sample statistics of full-size problems on a CPU.)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.problems import sizes  # noqa: E402
from harness.problems.problem import load_module, load_problem  # noqa: E402

LEVEL2 = ROOT / "suites" / "kernelbench" / "level2"
TOLERANCES = (1e-4, 1e-2)


def problem_files(only: set[int] | None) -> list[Path]:
    files = sorted(LEVEL2.glob("*.py"), key=lambda p: int(p.stem.split("_")[0]))
    return [f for f in files if only is None or int(f.stem.split("_")[0]) in only]


def module_at_size(path: Path, size: str, batch_cap: int | None):
    problem = load_problem(path, size=size)
    source = problem.source
    if batch_cap is not None:
        constants = sizes.integer_constants(source)
        if constants.get("batch_size", 0) > batch_cap:
            source = sizes.apply_overrides(source, {"batch_size": batch_cap}, str(path))
    return problem, load_module(source, f"degeneracy_{path.stem}_{size}_{batch_cap}")


def run_reference(module, device: str, input_seed: int):
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs()).to(device)
    torch.manual_seed(input_seed)
    inputs = [t.to(device) if isinstance(t, torch.Tensor) else t for t in module.get_inputs()]
    with torch.no_grad():
        output = model(*inputs)
    return output.float()


def fakes_that_pass(expected: torch.Tensor, other: torch.Tensor, tol: float) -> list[str]:
    fakes = {
        "zeros": torch.zeros_like(expected),
        "const": torch.full_like(expected, expected.mean().item()),
        "other": other,
    }
    return [name for name, fake in fakes.items() if torch.allclose(fake, expected, atol=tol, rtol=tol)]


def probe(path: Path, size: str, device: str, batch_cap: int | None) -> dict:
    problem, module = module_at_size(path, size, batch_cap)
    start = time.perf_counter()
    expected = run_reference(module, device, input_seed=1)
    seconds = time.perf_counter() - start
    other = run_reference(module, device, input_seed=2)
    row = {"id": path.stem.split("_")[0], "name": path.stem, "seconds": seconds,
           "shape": tuple(expected.shape), "finite": bool(torch.isfinite(expected).all()),
           "absmax": expected.abs().max().item(), "std": expected.std().item() if expected.numel() > 1 else 0.0,
           "exclude": problem.exclude}
    for tol in TOLERANCES:
        row[tol] = fakes_that_pass(expected, other, tol)
    moved = (other - expected).abs() > 1e-2 + 1e-2 * expected.abs()
    row["moved"] = moved.float().mean().item()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=("small", "full"), default="small")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-cap", type=int, default=None)
    parser.add_argument("--only", default=None, help="comma-separated problem ids")
    args = parser.parse_args()
    only = {int(i) for i in args.only.split(",")} if args.only else None
    degenerate = 0
    print(f"{'id':>3} {'seconds':>8} {'absmax':>10} {'std':>10} {'moved':>6}  fp32-fakes        1e-2-fakes        name")
    for path in problem_files(only):
        row = probe(path, args.size, args.device, args.batch_cap)
        bad = bool(row[1e-4] or row[1e-2]) or not row["finite"]
        degenerate += bad and row["exclude"] is None
        flag = "EXCLUDED" if row["exclude"] else ("DEGENERATE" if bad else "")
        print(f"{row['id']:>3} {row['seconds']:8.3f} {row['absmax']:10.3g} {row['std']:10.3g} {row['moved']:6.1%}  "
              f"{','.join(row[1e-4]) or '-':<17} {','.join(row[1e-2]) or '-':<17} {row['name']} {flag}", flush=True)
    print(f"degenerate and not excluded: {degenerate}")


if __name__ == "__main__":
    main()
