"""Crucible's KernelBench Level 2 files: contract, full sizes, small-size behaviour and non-degeneracy.

Every file in suites/kernelbench/level2 is loaded with the harness's own loader at size "small"
(its SMALL overrides applied to the source). The reference must run, return finite tensors, leave
torch's RNG alone, take signed inputs, and carry signal: over several input seeds, neither
all-zeros, nor one constant equal to the mean of the true outputs, nor the true output with its
second half zeroed, nor the reference's output for a different input may pass `allclose` at the
fp32 (1e-4) or the fp16/bf16 (1e-2) tolerance. A file marked EXCLUDE must fail that probe.
"""

from __future__ import annotations

import ast
import time
import types
from pathlib import Path

import pytest
import torch

from harness.problems.problem import load_problem
from tests.kernelbench.degeneracy_probe import upstream_row
from tests.kernelbench.degeneracy_probe import (
    FILE_NAME, FIX_KEYS, INPUT_SEEDS, as_tensors, build_model, problem_files, run_trials, upstream_table,
    degeneracy_findings as probe_findings,
)

REPO = Path(__file__).resolve().parents[2]
LEVEL2 = REPO / "suites" / "kernelbench" / "level2"
UPSTREAM_FIXTURES = REPO / "suites" / "kernelbench" / "fixtures_upstream" / "level2"
TABLE = Path(__file__).with_name("level2_upstream_table.json")
# A small reference takes ~0.01-0.3 s; the bound leaves room for a busy CI machine.
SMALL_SECONDS = 1.0


def load(path: Path, size: str = "small") -> types.ModuleType:
    return load_problem(path, size=size).module()


def degeneracy_findings(trials: list[list[torch.Tensor]]) -> list[str]:
    return probe_findings(trials, input_blind=True)


PATHS = problem_files(LEVEL2)
IDS = [p.stem for p in PATHS]


def test_level2_holds_ids_1_to_100_once_each_with_upstream_names():
    found = {}
    for path in PATHS:
        match = FILE_NAME.match(path.name)
        assert match, f"{path.name}: not <id>_<Name>.py"
        problem_id, name = int(match.group(1)), match.group(2)
        assert problem_id not in found, f"id {problem_id} twice: {found.get(problem_id)} and {path.name}"
        found[problem_id] = path.name
        upstream = upstream_row(TABLE, path)["name"]
        assert name == upstream, f"{path.name}: upstream name is {upstream}"
    assert sorted(found) == list(range(1, 101))


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_full_size_constants_and_constructor_arguments_match_upstream(path):
    row = upstream_row(TABLE, path)
    module = load(path, size="full")
    expected: dict = {}
    for assignment in row["sizes"].split(";"):
        exec(assignment.strip(), {}, expected)
    for name, value in expected.items():
        assert getattr(module, name) == value, f"{path.name}: {name} = {getattr(module, name)!r}, upstream {value!r}"
    ctor = eval(row["ctor_args"], {}, dict(vars(module)))
    assert list(module.get_init_inputs()) == ctor, f"{path.name}: constructor arguments differ from upstream"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_metadata_is_well_formed(path):
    problem = load_problem(path, size="small")
    module = problem.module()
    assert isinstance(problem.small, dict) and problem.small, f"{path.name}: SMALL must name the sizes it shrinks"
    assert set(problem.fixes) <= FIX_KEYS, f"{path.name}: FIXES keys {set(problem.fixes) - FIX_KEYS}"
    assert "input_distribution" in problem.fixes, f"{path.name}: the inputs differ from upstream's torch.rand"
    assert all(isinstance(v, str) and v for v in problem.fixes.values()), f"{path.name}: every fix says what changed"
    assert module.EXCLUDE is None or (isinstance(module.EXCLUDE, str) and module.EXCLUDE)
    assert ast.get_docstring(ast.parse(path.read_text())), f"{path.name}: the module docstring says what it computes"
    for name in ("Model", "get_inputs", "get_init_inputs"):
        assert callable(getattr(module, name, None)), f"{path.name}: {name} missing"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_small_reference_runs_fast_and_returns_finite_tensors(path):
    module = load(path)
    start = time.perf_counter()
    model = build_model(module)
    torch.manual_seed(INPUT_SEEDS[0])
    inputs = module.get_inputs()
    with torch.no_grad():
        outputs = as_tensors(model(*inputs))
    elapsed = time.perf_counter() - start
    assert elapsed < SMALL_SECONDS, f"{path.name}: small reference took {elapsed:.2f} s"
    for out in outputs:
        assert out.numel() > 0
        assert torch.isfinite(out.double()).all(), f"{path.name}: non-finite output"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_floating_inputs_are_signed(path):
    module = load(path)
    torch.manual_seed(INPUT_SEEDS[0])
    for index, tensor in enumerate(module.get_inputs()):
        if isinstance(tensor, torch.Tensor) and tensor.is_floating_point():
            assert tensor.min() < 0 < tensor.max(), f"{path.name}: input {index} is one-signed (upstream's rand)"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_forward_draws_no_random_numbers_and_repeats_exactly(path):
    module = load(path)
    model = build_model(module)  # left in train mode, where a dropout would draw a mask
    torch.manual_seed(INPUT_SEEDS[0])
    inputs = module.get_inputs()
    state = torch.get_rng_state()
    with torch.no_grad():
        first = as_tensors(model(*inputs))
        second = as_tensors(model(*inputs))
    assert torch.equal(state, torch.get_rng_state()), f"{path.name}: forward consumed random numbers"
    assert all(torch.equal(a, b) for a, b in zip(first, second)), f"{path.name}: forward is not repeatable"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_small_reference_is_not_degenerate_unless_excluded(path):
    module = load(path)
    findings = degeneracy_findings(run_trials(module))
    if module.EXCLUDE:
        assert findings, f"{path.name}: excluded as degenerate, but the probe finds it carries signal"
    else:
        assert not findings, f"{path.name}: " + "; ".join(findings)


def test_probe_flags_upstreams_identically_zero_and_input_blind_outputs():
    # The probe itself must be able to fail. Upstream L2 80 subtracts a (batch, 1) max's own mean
    # over its size-1 axis, so GELU sees 0 everywhere; a global average of identically distributed
    # noise is the same for every input at tolerance 1e-2.
    torch.manual_seed(0)
    row_max = torch.randn(8, 512).max(dim=1, keepdim=True).values
    upstream_80 = [[torch.nn.functional.gelu(row_max - row_max.mean(dim=1, keepdim=True)).double()]]
    assert "all-zeros passes at tol 0.0001" in degeneracy_findings(upstream_80)
    global_means = [[torch.randn(2, 4, 256, 256).mean(dim=(2, 3)).double() + 1.0] for _ in INPUT_SEEDS]
    assert "another input's output passes at tol 0.01" in degeneracy_findings(global_means)


@pytest.mark.parametrize("path", sorted(UPSTREAM_FIXTURES.glob("*.py")), ids=lambda p: p.stem)
def test_upstream_format_fixtures_follow_the_plain_contract(path):
    problem = load_problem(path, size="full")
    module = problem.module()
    assert not {"SMALL", "FIXES", "EXCLUDE"} & set(vars(module)), f"{path.name}: upstream files carry no metadata"
    torch.manual_seed(INPUT_SEEDS[0])
    assert all(t.min() >= 0 for t in module.get_inputs()), f"{path.name}: upstream inputs are torch.rand"
    for outs in run_trials(module):
        assert all(torch.isfinite(out).all() for out in outs)


def test_upstream_matmul_fixture_keeps_upstreams_mostly_zero_output():
    # Upstream L2 9 on rand inputs: the linear output rarely exceeds subtract_value, so ReLU zeroes
    # nearly everything; our level2 file fixes that with wider signed inputs.
    trials = run_trials(load(UPSTREAM_FIXTURES / "9_Matmul_Subtract_Multiply_ReLU.py", size="full"))
    zero_share = torch.cat([out.flatten() for outs in trials for out in outs]).eq(0).double().mean().item()
    assert zero_share > 0.99
    fixed = run_trials(load(LEVEL2 / "9_Matmul_Subtract_Multiply_ReLU.py"))
    assert torch.cat([out.flatten() for outs in fixed for out in outs]).eq(0).double().mean().item() < 0.9
