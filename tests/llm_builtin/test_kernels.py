"""The builtin writer's kernels compute what the reference computes (fp32, atol = rtol = 1e-4),
under Triton's CPU interpreter, with odd sizes that no block size divides."""

from __future__ import annotations

import pytest

# Masked-off lanes of a tile compute log(0) and 0 * inf in the interpreter's numpy; they are never stored.
pytestmark = pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning",
                                        "ignore:invalid value encountered:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"


def problem(body: str, inputs: str, init: str = "[]") -> str:
    return (HEADER + body.strip() + "\n\n\ndef get_inputs():\n    return " + inputs
            + "\n\n\ndef get_init_inputs():\n    return " + init + "\n")


ELEMENTWISE_CHAIN = problem('''
class Model(nn.Module):
    def __init__(self, channels, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(channels, 1, 1))
        self.scale = scale

    def forward(self, x, y):
        x = x * self.scale + self.bias
        x = F.gelu(torch.relu(x) - y)
        x = F.leaky_relu(x, 0.2) + torch.sigmoid(x) * torch.tanh(x)
        x = torch.clamp(x, min=-0.5, max=0.75)
        return F.hardswish(x) / 2 + F.softplus(x) - F.mish(x) * F.selu(x)
''', "[torch.randn(3, 5, 7, 9), torch.randn(7, 9)]", "[5, 1.5]")

SOFTMAX_LAST = problem('''
class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
''', "[torch.randn(6, 5000) * 4]")

SOFTMAX_MIDDLE = problem('''
class Model(nn.Module):
    def forward(self, x):
        return F.softmax(x, dim=1) * 2.0
''', "[torch.randn(2, 11, 3, 7)]")

LOG_SOFTMAX = problem('''
class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.log_softmax(x, dim=self.dim)
''', "[torch.randn(9, 333) * 3]", "[1]")

LOGSUMEXP = problem('''
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(torch.logsumexp(x, dim=2))
''', "[torch.randn(4, 3, 77)]")

LAYER_NORM = problem('''
class Model(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.ln = nn.LayerNorm(shape)
        with torch.no_grad():
            self.ln.weight.normal_()
            self.ln.bias.normal_()

    def forward(self, x):
        return self.ln(x)
''', "[torch.randn(3, 4, 6, 5) * 3 + 2]", "[(6, 5)]")

RMS_NORM = problem('''
class Model(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
        return x / rms
''', "[torch.randn(2, 13, 4, 5)]", "[1e-5]")

GROUP_NORM = problem('''
class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.gn.weight.normal_()
            self.gn.bias.normal_()

    def forward(self, x):
        return torch.sigmoid(self.gn(x))
''', "[torch.randn(3, 12, 5, 7) + 1]", "[4, 12]")

LINEAR_RELU = problem('''
class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x)) * 0.5
''', "[torch.randn(37, 70)]", "[70, 45]")

MATMUL = problem('''
class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
''', "[torch.randn(50, 83), torch.randn(83, 29)]")

MATMUL_TRANSPOSED_BATCHED = problem('''
class Model(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b.transpose(1, 2)) + torch.matmul(b[1], a[0].T).sum()
''', "[torch.randn(3, 20, 31), torch.randn(3, 17, 31)]")

CONV_CHAIN = problem('''
class Model(nn.Module):
    def __init__(self, cin, cout, kernel, subtract):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel)
        self.multiplier = nn.Parameter(torch.randn(cout, 1, 1))
        self.subtract = subtract
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        x = self.conv(x)
        x = torch.tanh(x - self.subtract) * self.multiplier
        x = self.pool(x)
        return F.mish(x)
''', "[torch.randn(2, 3, 11, 9)]", "[3, 6, 3, 0.3]")

REDUCTIONS = problem('''
class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=1), torch.max(x, dim=2)[0], torch.argmax(x, dim=1), x.mean(dim=(1, 2))
''', "[torch.randn(4, 33, 17)]")

FULL_REDUCTION = problem('''
class Model(nn.Module):
    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)
''', "[torch.randn(16, 301), torch.randn(16, 301)]")

MASKED_CUMSUM = problem('''
class Model(nn.Module):
    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=1) * 0.5
''', "[torch.randn(3, 5000), torch.randint(0, 2, (3, 5000)).bool()]")

CUMPROD_MIDDLE = problem('''
class Model(nn.Module):
    def forward(self, x):
        return torch.cumprod(1 + 0.1 * x, dim=1)
''', "[torch.randn(2, 40, 3)]")

CROSS_ENTROPY = problem('''
class Model(nn.Module):
    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets)


def _targets():
    targets = torch.randint(0, 37, (19,))
    targets[::4] = -100  # ignored rows leave the mean
    return targets
''', "[torch.randn(19, 37) * 2, _targets()]")


@pytest.mark.parametrize("source, kernels", [
    (ELEMENTWISE_CHAIN, 1), (SOFTMAX_LAST, 1), (SOFTMAX_MIDDLE, 1), (LOG_SOFTMAX, 1), (LOGSUMEXP, 1),
    (LAYER_NORM, 1), (RMS_NORM, 1), (GROUP_NORM, 1), (LINEAR_RELU, 1), (MATMUL, 1), (CONV_CHAIN, 4),
    (REDUCTIONS, 3), (FULL_REDUCTION, 1), (MASKED_CUMSUM, 1), (CUMPROD_MIDDLE, 1), (CROSS_ENTROPY, 2),
], ids=["elementwise-broadcast-bias", "softmax-long-rows", "softmax-middle-dim", "log-softmax", "logsumexp",
        "layer-norm", "rms-norm", "group-norm", "linear-bias-relu-epilogue", "matmul", "conv-then-fused-chain",
        "sum-max-argmax-mean", "full-mean", "masked-cumsum", "cumprod-middle-dim", "cross-entropy-ignore-index"])
def test_generated_kernels_match_the_reference_in_fused_kernels(run_builtin, source, kernels):
    """``kernels``: the fused kernels plus one line per library template (conv-then-fused-chain: 2 + conv, pool)."""
    outcome = run_builtin(source)
    assert outcome.close, f"max abs error {outcome.max_error}\n{outcome.source}"
    assert len(outcome.kernels) == kernels, outcome.kernels
    assert "@triton.jit" in outcome.source


def test_matmul_of_transposed_and_batched_operands_uses_strides_and_matches(run_builtin):
    outcome = run_builtin(MATMUL_TRANSPOSED_BATCHED)
    assert outcome.close, outcome.max_error
    for launcher in outcome.source.split("\ndef _launch_")[1:]:
        body = launcher.split("\n\n")[0]
        if "tl.dot" not in body and "strides" in body:  # a matmul launcher: operands keep their layout
            assert "in0 = in0.contiguous()" not in body and "in1 = in1.contiguous()" not in body


@pytest.mark.parametrize("source", [LINEAR_RELU, LAYER_NORM, SOFTMAX_LAST], ids=["linear", "layer-norm", "softmax"])
def test_conservative_variant_splits_fusion_and_still_matches(run_builtin, source):
    default, conservative = run_builtin(source), run_builtin(source, "conservative")
    assert conservative.close, conservative.max_error
    assert "builtin-variant: conservative" in conservative.source
    assert len(conservative.kernels) >= len(default.kernels)


def test_model_new_keeps_the_reference_parameter_names(run_builtin):
    outcome = run_builtin(CONV_CHAIN)
    assert outcome.candidate_keys == outcome.reference_keys == ["conv.bias", "conv.weight", "multiplier"]
    assert "_tk_conv_module(self.conv, " in outcome.source  # the Triton convolution reads the module's weights


def test_kernel_output_is_a_new_tensor_not_an_input_alias(tmp_path):
    import importlib.util

    import torch

    from submitters.builtin.writer import write

    source = problem('''
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
''', "[torch.randn(5, 7)]")
    path = tmp_path / "candidate.py"
    path.write_text(write(source).source)
    spec = importlib.util.spec_from_file_location("alias_candidate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = torch.randn(5, 7)
    y = module.ModelNew()(x)
    assert y.data_ptr() != x.data_ptr()
    assert torch.equal(y, torch.relu(x))


@pytest.mark.parametrize("written_from, evaluated_at", [
    (GROUP_NORM, GROUP_NORM.replace("[4, 12]", "[3, 6]").replace("(3, 12, 5, 7)", "(2, 6, 4, 9)")),
    (LINEAR_RELU, LINEAR_RELU.replace("[70, 45]", "[19, 130]").replace("(37, 70)", "(5, 19)")),
    (CONV_CHAIN, CONV_CHAIN.replace("[3, 6, 3, 0.3]", "[3, 4, 3, 0.3]").replace("(2, 3, 11, 9)", "(1, 3, 8, 13)")),
], ids=["group-norm", "linear", "conv-chain"])
def test_kernels_written_at_one_size_are_correct_at_other_sizes_and_group_counts(run_builtin, written_from,
                                                                                  evaluated_at):
    assert written_from != evaluated_at
    outcome = run_builtin(written_from, evaluate_with=evaluated_at)
    assert outcome.close, outcome.max_error


@pytest.mark.parametrize("source", [LINEAR_RELU, MATMUL_TRANSPOSED_BATCHED, SOFTMAX_LAST, FULL_REDUCTION, LAYER_NORM],
                         ids=["split-k-linear-epilogue", "split-k-batched", "split-rows-softmax", "split-rows-full-mean",
                              "split-rows-layer-norm"])
def test_split_paths_combine_partials_in_order_and_match(run_builtin, source):
    calls = []  # on a GPU the launchers split K or rows when the natural grid cannot fill it; force it here

    def three_pieces(device, programs, length, block, cap):
        calls.append(length)
        return 3

    outcome = run_builtin(source, patch={"_splits": three_pieces})
    assert calls and outcome.close, outcome.max_error


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
@pytest.mark.parametrize("source", [CONV_CHAIN, LAYER_NORM, LINEAR_RELU], ids=["conv-chain", "layer-norm", "linear"])
def test_half_precision_inputs_compute_in_fp32_and_store_their_dtype(run_builtin, source, dtype_name):
    import torch

    outcome = run_builtin(source, dtype=getattr(torch, dtype_name))
    assert outcome.close, outcome.max_error


CHANNEL_SHUFFLE = problem('''
class Model(nn.Module):
    def __init__(self, groups, features):
        super().__init__()
        self.groups = groups
        self.features = features

    def forward(self, x):
        b, c, h, w = x.size()
        x = torch.relu(x)
        x = x.view(b, self.groups, c // self.groups, h, w).transpose(1, 2).contiguous().view(b, -1, h, w)
        return x.view(-1, self.features) * 2
''', "[torch.randn(2, 6, 3, 5)]", "[3, 15]")


def test_layout_changes_stay_in_pytorch_and_attribute_sizes_follow_the_constructor(run_builtin):
    other = CHANNEL_SHUFFLE.replace("[3, 15]", "[2, 12]").replace("(2, 6, 3, 5)", "(3, 8, 4, 3)")
    outcome = run_builtin(CHANNEL_SHUFFLE, evaluate_with=other)
    assert outcome.close, outcome.max_error
    assert ".contiguous()" in outcome.source and "// self.groups" in outcome.source and "self.features" in outcome.source
