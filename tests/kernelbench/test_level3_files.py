"""KernelBench Level 3 problem files: the contract, their small size, and their full size.

Every file is loaded by the harness's own loader at its SMALL size (module-level constants rewritten
through the AST) and checked the way the judge will use it: seeded construction, seeded inputs,
one forward pass. Full sizes are checked without compute on the meta device: the model builds, the
forward pass's shapes flow, and the published parameter counts come out where they apply.
"""
import ast
import hashlib
import pathlib

import pytest

torch = pytest.importorskip("torch")

from harness.problems.problem import load_module, load_problem  # noqa: E402
from harness.problems.sizes import apply_overrides  # noqa: E402

LEVEL3 = pathlib.Path(__file__).resolve().parents[2] / "suites" / "kernelbench" / "level3"

# Upstream ids and names (KernelBench level3), one file per id.
UPSTREAM_NAMES = {
    1: "MLP", 2: "ShallowWideMLP", 3: "DeepNarrowMLP", 4: "LeNet5", 5: "AlexNet",
    6: "GoogleNetInceptionModule", 7: "GoogleNetInceptionV1", 8: "ResNetBasicBlock",
    9: "ResNet18", 10: "ResNet101", 11: "VGG16", 12: "VGG19", 13: "DenseNet121TransitionLayer",
    14: "DenseNet121DenseBlock", 15: "DenseNet121", 16: "DenseNet201", 17: "SqueezeNetFireModule",
    18: "SqueezeNet", 19: "MobileNetV1", 20: "MobileNetV2", 21: "EfficientNetMBConv",
    22: "EfficientNetB0", 23: "EfficientNetB1", 24: "EfficientNetB2", 25: "ShuffleNetUnit",
    26: "ShuffleNet", 27: "RegNet", 28: "VisionTransformer", 29: "SwinMLP",
    30: "SwinTransformerV2", 31: "VisionAttention", 32: "ConvolutionalVisionTransformer",
    33: "VanillaRNN", 34: "VanillaRNNHidden", 35: "LSTM", 36: "LSTMHn", 37: "LSTMCn",
    38: "LSTMBidirectional", 39: "GRU", 40: "GRUHidden", 41: "GRUBidirectional",
    42: "GRUBidirectionalHidden", 43: "MinGPTCausalAttention", 44: "MiniGPTBlock",
    45: "UNetSoftmax", 46: "NetVladWithGhostClusters", 47: "NetVladNoGhostClusters",
    48: "Mamba2ReturnY", 49: "Mamba2ReturnFinalState", 50: "ReLUSelfAttention",
}

FIX_KEYS = {"input_distribution", "degenerate_output", "dropout", "rng_in_forward",
            "integer_inputs", "hardcoded_precision", "other"}

# Published parameter counts at the file's full size (num_classes = 1000 unless noted). Only
# architectures that KernelBench builds exactly as published are listed.
PUBLISHED_PARAMS = {
    "5_AlexNet.py": 62_378_344,        # original single-tower AlexNet (96 first-layer filters)
    "9_ResNet18.py": 11_689_512,
    "10_ResNet101.py": 44_549_160,
    "11_VGG16.py": 138_357_544,
    "12_VGG19.py": 143_667_240,
    "18_SqueezeNet.py": 1_248_424,     # SqueezeNet 1.0
    "19_MobileNetV1.py": 4_231_976,    # width 1.0, BN gamma/beta included
    "20_MobileNetV2.py": 3_504_872,
}
SWIN_V2_TINY_PARAMS = 28.35e6          # SwinV2-T as reported by timm (about 28.3M)

PROBLEM_FILES = sorted(LEVEL3.glob("*.py"), key=lambda p: int(p.name.split("_")[0]))


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Small problems are tiny; with one thread, OpenMP workers do not spin-wait for each other
    when other processes share the cores, which made this module several times slower there."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _literal_assignments(tree):
    """Top-level `NAME = <literal>` assignments of a module, as Python values."""
    values = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                try:
                    values[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    pass
    return values


def load(path, size="small", overrides=None):
    """The problem's module at `size` through the harness's loader (SMALL applied by AST rewrite).

    `overrides` rewrites further size constants the same way (used to keep full-size meta runs
    of recurrent models short).
    """
    problem = load_problem(path, size=size, level=3)
    if not overrides:
        return problem.module()
    source = apply_overrides(problem.source, overrides, str(path))
    return load_module(source, f"level3_test_{path.stem}_{hashlib.sha256(source.encode()).hexdigest()[:12]}")


def build(module, init_seed=0, input_seed=1):
    """The judge's order: seeded construction, then seeded inputs."""
    torch.manual_seed(init_seed)
    model = module.Model(*module.get_init_inputs())
    torch.manual_seed(input_seed)
    return model, module.get_inputs()


def as_tensors(output):
    return list(output) if isinstance(output, (tuple, list)) else [output]


def is_degenerate(output, tol):
    """All zeros, or a constant equal to the output's mean, passes allclose at tolerance tol."""
    zeros = torch.zeros_like(output)
    constant = torch.full_like(output, output.mean().item())
    return any(torch.allclose(guess, output, atol=tol, rtol=tol) for guess in (zeros, constant))


def test_level3_holds_each_upstream_id_once_under_its_upstream_name():
    names = [path.stem for path in LEVEL3.glob("*.py")]
    assert sorted(names) == sorted(f"{i}_{name}" for i, name in UPSTREAM_NAMES.items())


@pytest.mark.parametrize("path", PROBLEM_FILES, ids=lambda p: p.stem)
def test_metadata_is_literal_and_uses_only_known_fix_keys(path):
    values = _literal_assignments(ast.parse(path.read_text()))
    assert {"SMALL", "FIXES", "EXCLUDE"} <= values.keys(), "SMALL, FIXES and EXCLUDE are literals"
    assert set(values["FIXES"]) <= FIX_KEYS
    assert all(isinstance(text, str) and text for text in values["FIXES"].values())
    assert values["EXCLUDE"] is None or isinstance(values["EXCLUDE"], str)
    # Every upstream Level 3 input was torch.rand; ours are signed, and the manifest says so.
    assert "input_distribution" in values["FIXES"]
    get_inputs = next(node for node in ast.parse(path.read_text()).body
                      if isinstance(node, ast.FunctionDef) and node.name == "get_inputs")
    assert "torch.rand(" not in ast.unparse(get_inputs)


@pytest.mark.parametrize("path", PROBLEM_FILES, ids=lambda p: p.stem)
def test_small_size_runs_like_the_judge_runs_it(path):
    """Finite, repeatable, RNG-free, input-preserving, non-degenerate, input-dependent, and
    well-conditioned (unless the problem is excluded)."""
    module = load(path, "small")
    assert callable(module.get_inputs) and callable(module.get_init_inputs)
    model, inputs = build(module)
    torch.manual_seed(2)
    other_inputs = module.get_inputs()
    originals = [x.clone() if torch.is_tensor(x) else x for x in inputs]
    assert any(torch.is_tensor(x) and x.is_floating_point() and (x < 0).any() for x in inputs)
    rng_before = torch.random.get_rng_state()
    with torch.no_grad():
        first = as_tensors(model(*inputs))
        second = as_tensors(model(*inputs))
        other = as_tensors(model(*other_inputs))
    assert torch.equal(rng_before, torch.random.get_rng_state()), "forward drew random numbers"
    for x, original in zip(inputs, originals):
        if torch.is_tensor(x):
            assert torch.equal(x, original), "forward mutated an input"
    for a, b in zip(first, second):
        assert torch.isfinite(a).all()
        assert torch.equal(a, b), "a second call with the same inputs gave another output"
    if module.EXCLUDE is None:
        for out in first:
            assert not is_degenerate(out, 1e-4) and not is_degenerate(out, 1e-2)
        # Other inputs must give other outputs beyond the loosest tolerance: a network whose
        # output is a constant in disguise (signal lost on the way) would pass any candidate.
        assert any(not torch.allclose(a, b, atol=1e-2, rtol=1e-2) for a, b in zip(first, other))
        # A correct implementation that rounds differently must pass the fp32 tolerance: the
        # fp64 result stands in for it. Ill-conditioned problems fail here.
        model = model.double()
        with torch.no_grad():
            exact = as_tensors(model(*[x.double() if x.is_floating_point() else x
                                       for x in inputs]))
        for out, ref in zip(first, exact):
            assert torch.allclose(out.double(), ref, atol=1e-4, rtol=1e-4)


RECURRENT_FILES = [p for p in PROBLEM_FILES if 33 <= int(p.name.split("_")[0]) <= 42]


@pytest.mark.parametrize("path", RECURRENT_FILES, ids=lambda p: p.stem)
def test_recurrent_state_follows_the_requested_precision(path):
    module = load(path, "small")
    model, inputs = build(module)
    model = model.to(torch.float64)
    inputs = [x.to(torch.float64) if x.is_floating_point() else x for x in inputs]
    with torch.no_grad():
        assert all(out.dtype == torch.float64 for out in as_tensors(model(*inputs)))


@pytest.mark.parametrize("path", PROBLEM_FILES, ids=lambda p: p.stem)
def test_full_size_builds_and_its_shapes_flow_on_the_meta_device(path):
    # Full widths and depths everywhere; recurrent models step through 2 time steps, not 512,
    # because meta-device RNN kernels run step by step in Python.
    sequence_names = {"sequence_length", "seq_len"} & _literal_assignments(
        ast.parse(path.read_text())).keys()
    module = load(path, "full", overrides={name: 2 for name in sequence_names})
    with torch.device("meta"):
        model, inputs = build(module)
        outputs = as_tensors(model(*inputs))
    assert all(out.is_meta and out.numel() > 0 for out in outputs)
    expected = PUBLISHED_PARAMS.get(path.name)
    if expected is not None:
        assert sum(p.numel() for p in model.parameters()) == expected


def test_lenet5_has_the_classic_parameter_count_at_ten_classes():
    module = load(LEVEL3 / "4_LeNet5.py", "full")
    assert sum(p.numel() for p in module.Model(10).parameters()) == 61_706


def test_swin_v2_tiny_has_about_the_published_parameter_count():
    module = load(LEVEL3 / "30_SwinTransformerV2.py", "full")
    with torch.device("meta"):
        count = sum(p.numel() for p in module.Model().parameters())
    assert abs(count - SWIN_V2_TINY_PARAMS) < 0.01 * SWIN_V2_TINY_PARAMS


def test_upstream_format_fixture_loads_as_a_plain_kernelbench_file():
    fixture = LEVEL3.parent / "fixtures_upstream" / "level3" / "1_MLP.py"
    problem = load_problem(fixture, size="small", level=3)
    assert (problem.small, problem.fixes, problem.exclude) == ({}, {}, None)
    module = problem.module()
    torch.manual_seed(0)
    output = module.Model(*module.get_init_inputs())(*module.get_inputs())
    assert output.shape == (module.batch_size, module.output_size)
