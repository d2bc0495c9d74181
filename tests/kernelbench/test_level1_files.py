"""Crucible's KernelBench Level 1 files: contract, full sizes, small-size behaviour and non-degeneracy.

Every file in suites/kernelbench/level1 is executed at its declared SMALL size. The reference must
run, return finite tensors, leave torch's RNG alone, and carry signal: neither all-zeros, nor one
constant equal to the mean of the true outputs, nor the true output with its second half zeroed
may pass `allclose` at the fp32 (1e-4) or the fp16/bf16 (1e-2) tolerance over several input seeds.
"""

from __future__ import annotations

import ast
import time
import types
from pathlib import Path

import pytest
import torch

from harness.problems.sizes import apply_overrides
from tests.kernelbench.degeneracy_probe import upstream_row
from tests.kernelbench.degeneracy_probe import (
    FILE_NAME, FIX_KEYS, INPUT_SEEDS, as_tensors, build_model, problem_files, run_trials, upstream_table,
    degeneracy_findings,
)

REPO = Path(__file__).resolve().parents[2]
LEVEL1 = REPO / "suites" / "kernelbench" / "level1"
UPSTREAM_FIXTURES = REPO / "suites" / "kernelbench" / "fixtures_upstream" / "level1"
TABLE = Path(__file__).with_name("level1_upstream_table.json")
# A small reference takes under 0.2 s of wall time on 2 idle cores; the bound is on CPU time (both
# threads), which other processes on a busy machine do not inflate.
SMALL_CPU_SECONDS = 1.0


def literal_assignment(source: str, name: str):
    """The literal value a file assigns to a top-level name, or None when it assigns none."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def load(path: Path, size: str = "small") -> types.ModuleType:
    """Execute a problem file, with its SMALL overrides applied to the source when size is small."""
    overrides = literal_assignment(path.read_text(), "SMALL") if size == "small" else None
    return load_with(path, overrides or {})


def load_with(path: Path, overrides: dict) -> types.ModuleType:
    """Execute a problem file with the given size constants rewritten in its source first."""
    source = apply_overrides(path.read_text(), overrides, where=path.name)
    module = types.ModuleType(f"kernelbench_l1_{path.stem}")
    module.__file__ = str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


PATHS = problem_files(LEVEL1)
IDS = [p.stem for p in PATHS]


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    # Small problems gain nothing from intra-op threads, and on a loaded machine spinning OpenMP
    # threads make tiny ops (allclose over 66k elements) a hundred times slower.
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def test_level1_holds_ids_1_to_100_once_each_with_upstream_names():
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
        found = getattr(module, name)
        assert found == value, f"{path.name}: {name} = {found!r}, upstream {value!r}"
    ctor = eval(row["ctor_args"], {}, dict(vars(module)))
    assert list(module.get_init_inputs()) == ctor, f"{path.name}: constructor arguments differ from upstream"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_metadata_is_well_formed(path):
    source = path.read_text()
    module = load(path)
    small, fixes = literal_assignment(source, "SMALL"), literal_assignment(source, "FIXES")
    assert isinstance(small, dict) and small, f"{path.name}: SMALL must name the sizes it shrinks"
    assert isinstance(fixes, dict) and set(fixes) <= FIX_KEYS, f"{path.name}: FIXES keys {set(fixes) - FIX_KEYS}"
    assert all(isinstance(v, str) and v for v in fixes.values()), f"{path.name}: every fix says what changed"
    assert module.EXCLUDE is None or (isinstance(module.EXCLUDE, str) and module.EXCLUDE)
    assert ast.get_docstring(ast.parse(source)), f"{path.name}: the module docstring says what it computes"
    for name in ("Model", "get_inputs", "get_init_inputs"):
        assert callable(getattr(module, name, None)), f"{path.name}: {name} missing"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_small_reference_runs_fast_and_returns_finite_tensors(path):
    module = load(path)
    start = time.process_time()
    model = build_model(module)
    torch.manual_seed(INPUT_SEEDS[0])
    inputs = module.get_inputs()
    with torch.no_grad():
        outputs = as_tensors(model(*inputs))
    elapsed = time.process_time() - start
    assert elapsed < SMALL_CPU_SECONDS, f"{path.name}: small reference took {elapsed:.2f} CPU seconds"
    for out in outputs:
        assert out.numel() > 0
        assert torch.isfinite(out.double()).all(), f"{path.name}: non-finite output"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_forward_draws_no_random_numbers_and_repeats_exactly(path):
    module = load(path)
    model = build_model(module)
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


# Reductions and scans whose degeneracy depends on the length reduced over: full length, few rows.
FULL_LENGTH = {
    "23_Softmax": {"batch_size": 2},
    "24_LogSoftmax": {"batch_size": 2},
    "38_L1Norm_": {"batch_size": 4},
    "39_L2Norm_": {"batch_size": 4},
    "47_Sum_reduction_over_a_dimension": {"batch_size": 1, "dim2": 63},
    "48_Mean_reduction_over_a_dimension": {"batch_size": 1, "dim2": 63},
    "49_Max_reduction_over_a_dimension": {"batch_size": 1, "dim2": 63},
    "51_Argmax_over_a_dimension": {"batch_size": 1, "dim2": 63},
    "52_Argmin_over_a_dimension": {"batch_size": 1, "dim2": 63},
    "53_Min_reduction_over_a_dimension": {"batch_size": 1, "dim2": 63},
    "89_cumsum": {"batch_size": 2},
    "90_cumprod": {"batch_size": 2},
    "91_cumsum_reverse": {"batch_size": 2},
    "92_cumsum_exclusive": {"batch_size": 2},
    "93_masked_cumsum": {"batch_size": 2},
    "97_ScaledDotProductAttention": {"batch_size": 1, "num_heads": 1},
}


@pytest.mark.parametrize("stem", sorted(FULL_LENGTH), ids=str)
def test_full_length_reductions_are_not_degenerate(stem):
    findings = degeneracy_findings(run_trials(load_with(LEVEL1 / f"{stem}.py", FULL_LENGTH[stem])))
    assert not findings, f"{stem} at full reduction length: " + "; ".join(findings)


@pytest.mark.parametrize("stem, position, dtypes", [
    ("93_masked_cumsum", 1, {torch.bool}),
    ("95_CrossEntropyLoss", 1, {torch.int64}),
    ("100_HingeLoss", 1, {torch.int64}),
])
def test_integer_and_boolean_inputs_are_drawn_as_such(stem, position, dtypes):
    module = load(LEVEL1 / f"{stem}.py")
    torch.manual_seed(INPUT_SEEDS[0])
    assert module.get_inputs()[position].dtype in dtypes


def test_hinge_targets_are_plus_or_minus_one():
    module = load(LEVEL1 / "100_HingeLoss.py")
    torch.manual_seed(INPUT_SEEDS[0])
    targets = module.get_inputs()[1]
    assert set(targets.unique().tolist()) == {-1, 1}


def test_probe_flags_what_upstream_rand_inputs_make_degenerate():
    # The probe itself must be able to fail: a softmax of rand over a wide row is ~1 / width
    # everywhere, so zeros pass at 1e-4; a running product of rand factors underflows to 0 early.
    torch.manual_seed(0)
    wide_rand_softmax = [[torch.softmax(torch.rand(4, 20000), dim=1).double()]]
    assert "all-zeros passes at tol 0.0001" in degeneracy_findings(wide_rand_softmax)
    cumprod_of_rand = [[torch.cumprod(torch.rand(4, 4000), dim=1).double()]]
    assert "the output with its second half zeroed passes at tol 0.0001" in degeneracy_findings(cumprod_of_rand)


@pytest.mark.parametrize("path", sorted(UPSTREAM_FIXTURES.glob("*.py")), ids=lambda p: p.stem)
def test_upstream_format_fixtures_follow_the_plain_contract(path):
    module = load(path, size="full")
    assert not {"SMALL", "FIXES", "EXCLUDE"} & set(vars(module)), f"{path.name}: upstream files carry no metadata"
    assert all(isinstance(v, int) for k, v in vars(module).items() if k.islower() and not k.startswith("_")
               and not callable(v) and not isinstance(v, types.ModuleType)), f"{path.name}: plain integer sizes"
    for outs in run_trials(module):
        assert all(torch.isfinite(out).all() for out in outs)


def test_upstream_softmax_fixture_keeps_upstreams_degenerate_output():
    findings = degeneracy_findings(run_trials(load(UPSTREAM_FIXTURES / "23_Softmax.py", size="full")))
    assert "all-zeros passes at tol 0.0001" in findings
