"""What the Level 1 and Level 2 file tests share: finding the files, running a reference the way the
judge does (weights built once from one seed, fresh inputs per seed, outputs in float64), and the
degeneracy probe: which cheap fake outputs would pass `allclose` against every true output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

FILE_NAME = re.compile(r"^(\d+)_(\w+)\.py$")
FIX_KEYS = {"input_distribution", "degenerate_output", "dropout", "rng_in_forward", "integer_inputs",
            "hardcoded_precision", "other"}
TOLERANCES = (1e-4, 1e-2)       # the judge's fp32 default, and its fp16/bf16 default
INIT_SEED = 42
INPUT_SEEDS = (1, 2, 3)


def problem_files(level_dir: Path) -> list[Path]:
    return sorted(level_dir.glob("*.py"), key=lambda p: int(FILE_NAME.match(p.name).group(1)))


def upstream_table(table: Path) -> dict[int, dict]:
    return {row["id"]: row for row in json.loads(table.read_text())["problems"]}


def upstream_row(table: Path, path: Path) -> dict:
    """The upstream table's row for a problem file; a failure saying what to do when it has none."""
    import pytest

    match = FILE_NAME.match(path.name)
    rows = upstream_table(table)
    if not match or int(match.group(1)) not in rows:
        pytest.fail(f"{path.name}: no upstream KernelBench problem with this id in {table.name}. These level "
                    f"folders hold upstream's problems under upstream's ids; if upstream added it, add its row "
                    f"to {table.name}", pytrace=False)
    return rows[int(match.group(1))]


def as_tensors(output) -> list[torch.Tensor]:
    items = list(output) if isinstance(output, (tuple, list)) else [output]
    assert all(isinstance(t, torch.Tensor) for t in items), f"forward returned {type(output).__name__}"
    return items


def build_model(module) -> torch.nn.Module:
    torch.manual_seed(INIT_SEED)
    return module.Model(*module.get_init_inputs())


def run_trials(module) -> list[list[torch.Tensor]]:
    """The reference's outputs (float64) for each input seed, weights built once, as the judge does."""
    model = build_model(module)
    trials = []
    for seed in INPUT_SEEDS:
        torch.manual_seed(seed)
        inputs = module.get_inputs()
        with torch.no_grad():
            trials.append([t.double() for t in as_tensors(model(*inputs))])
    return trials


def passes_all(trials: list[list[torch.Tensor]], fake, tol: float) -> bool:
    """Whether the output fake(expected) would pass allclose against every output of every trial."""
    return all(torch.allclose(fake(out), out, atol=tol, rtol=tol) for outs in trials for out in outs)


def second_half_zeroed(out: torch.Tensor) -> torch.Tensor:
    """The output with the second half of its last non-trivial axis zeroed: what a scan or a row
    kernel that stops half way, or a grid that covers half the rows or columns, would return."""
    axis = max(d for d in range(out.dim()) if out.shape[d] > 1)
    fake = out.clone()
    fake.narrow(axis, out.shape[axis] // 2, out.shape[axis] - out.shape[axis] // 2).zero_()
    return fake


def input_blind_at(trials: list[list[torch.Tensor]], tol: float) -> bool:
    """Whether the output for one input passes as the output for another: the input barely matters."""
    first = trials[0]
    return any(all(torch.allclose(a, b, atol=tol, rtol=tol) for a, b in zip(first, other)) for other in trials[1:])


def degeneracy_findings(trials: list[list[torch.Tensor]], input_blind: bool = False) -> list[str]:
    """Which cheap fake outputs would pass at which tolerance; empty for a problem that carries signal.
    With input_blind, also whether another input's output would pass (Level 2's fused chains can
    saturate to an output that hardly depends on the input)."""
    mean = torch.cat([out.flatten() for outs in trials for out in outs]).mean().item()
    fakes = {"all-zeros": torch.zeros_like, f"the constant mean {mean:.4g}": lambda o: torch.full_like(o, mean)}
    if all(out.numel() > 1 for outs in trials for out in outs):  # a scalar has no half to drop
        fakes["the output with its second half zeroed"] = second_half_zeroed
    findings = [f"{label} passes at tol {tol:g}" for tol in TOLERANCES for label, fake in fakes.items()
                if passes_all(trials, fake, tol)]
    if input_blind:
        findings += [f"another input's output passes at tol {tol:g}" for tol in TOLERANCES if input_blind_at(trials, tol)]
    return findings
