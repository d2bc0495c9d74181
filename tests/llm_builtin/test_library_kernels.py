"""The library templates (convolution, pooling, batch norm, attention) compute what PyTorch computes,
written through the builtin writer and run in Triton's CPU interpreter with odd shapes: sizes no
block divides, stride/padding/dilation corners, groups, depthwise, transposed, 1D/2D/3D."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning",
                                        "ignore:invalid value encountered:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"


def module_problem(construct: str, shape: tuple, forward: str = "self.op(x)") -> str:
    return (HEADER + "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            f"        self.op = {construct}\n\n    def forward(self, x):\n        return {forward}\n\n\n"
            f"def get_inputs():\n    return [torch.randn{shape}]\n\n\ndef get_init_inputs():\n    return []\n")


CONVOLUTIONS = {
    "conv1d_strided_dilated_padded": ("nn.Conv1d(3, 5, 3, stride=2, padding=2, dilation=3)", (2, 3, 29)),
    "conv2d_asymmetric_bias": ("nn.Conv2d(3, 7, (3, 5), stride=(2, 1), padding=(1, 2))", (2, 3, 11, 13)),
    "conv2d_grouped_dilated": ("nn.Conv2d(6, 9, 3, padding=2, dilation=2, groups=3, bias=False)", (1, 6, 9, 10)),
    "conv2d_depthwise": ("nn.Conv2d(5, 5, (3, 2), stride=2, padding=1, groups=5)", (2, 5, 9, 7)),
    "conv2d_pointwise": ("nn.Conv2d(17, 19, 1)", (2, 17, 5, 3)),
    "conv2d_same_padding": ("nn.Conv2d(3, 4, (4, 3), padding='same')", (1, 3, 7, 8)),
    "conv3d_asymmetric": ("nn.Conv3d(2, 3, (2, 3, 1), stride=(1, 2, 1), padding=(1, 0, 1))", (1, 2, 5, 7, 6)),
    "conv_transpose1d_all_corners": ("nn.ConvTranspose1d(4, 6, 3, stride=3, padding=2, output_padding=1, "
                                     "dilation=2, groups=2)", (2, 4, 9)),
    "conv_transpose2d_strided_grouped": ("nn.ConvTranspose2d(4, 6, (3, 4), stride=(2, 3), padding=(1, 2), "
                                         "dilation=(2, 1), groups=2, bias=False)", (2, 4, 5, 6)),
    "conv_transpose2d_plain_bias": ("nn.ConvTranspose2d(3, 5, 3)", (1, 3, 7, 6)),
    "conv_transpose3d_strided": ("nn.ConvTranspose3d(2, 4, (3, 2, 3), stride=2, padding=1)", (1, 2, 3, 4, 5)),
}


@pytest.mark.parametrize("case", sorted(CONVOLUTIONS))
def test_convolution_matches_pytorch(run_builtin, case):
    construct, shape = CONVOLUTIONS[case]
    outcome = run_builtin(module_problem(construct, shape))
    assert "_tk_conv" in outcome.source and "self.op(" not in outcome.source
    assert outcome.close, f"{case}: max error {outcome.max_error}"


def test_functional_convolution_and_the_fused_epilogue_after_it(run_builtin):
    reference = module_problem("nn.Conv2d(3, 8, 3)", (2, 3, 10, 9),
                               "torch.relu(F.conv2d(x, self.op.weight, self.op.bias, stride=2, padding=1)) * 2")
    outcome = run_builtin(reference)
    assert "_tk_conv(" in outcome.source and len(outcome.kernels) >= 2  # the conv and the fused relu/scale
    assert outcome.close, outcome.max_error


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_convolution_in_half_precision(run_builtin, dtype):
    outcome = run_builtin(module_problem("nn.Conv2d(4, 6, 3, padding=1, groups=2)", (2, 4, 7, 9)), dtype=dtype)
    assert outcome.close, outcome.max_error


POOLS = {
    "max1d_padded_dilated": ("nn.MaxPool1d(4, stride=2, padding=2, dilation=3)", (2, 3, 23)),
    "max2d_ceil_mode": ("nn.MaxPool2d((3, 2), stride=(2, 2), padding=(1, 1), ceil_mode=True)", (2, 3, 10, 9)),
    "max3d": ("nn.MaxPool3d(3, stride=2, padding=1, dilation=(1, 2, 1))", (1, 2, 7, 9, 6)),
    "avg1d_count_pad": ("nn.AvgPool1d(4, stride=3, padding=2)", (2, 3, 17)),
    "avg2d_exclude_pad_ceil": ("nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)",
                               (2, 3, 10, 11)),
    "avg2d_divisor": ("nn.AvgPool2d((2, 3), divisor_override=5)", (1, 2, 7, 8)),
    "avg3d": ("nn.AvgPool3d((2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0))", (1, 2, 5, 7, 6)),
    "adaptive_avg2d": ("nn.AdaptiveAvgPool2d((3, 4))", (2, 3, 7, 10)),
    "adaptive_avg2d_global": ("nn.AdaptiveAvgPool2d(1)", (2, 5, 6, 7)),
}


@pytest.mark.parametrize("case", sorted(POOLS))
def test_pooling_matches_pytorch(run_builtin, case):
    construct, shape = POOLS[case]
    outcome = run_builtin(module_problem(construct, shape))
    assert "_tk_pool_module" in outcome.source
    assert outcome.close, f"{case}: max error {outcome.max_error}"


def test_max_pool_with_indices_stays_in_pytorch_and_is_refused_alone(run_builtin):
    from submitters.builtin.ir import NoRule
    from submitters.builtin.writer import write

    with pytest.raises(NoRule, match="stays in PyTorch"):
        write(module_problem("nn.MaxPool2d(2, return_indices=True)", (1, 2, 4, 4), "self.op(x)[0]"))


BATCH_NORM = HEADER + '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(5)
        self.bn1 = nn.BatchNorm1d(3, momentum=0.3, affine=False)

    def forward(self, x, y):
        return self.bn(x) * 3 - 1, self.bn1(y)


def get_inputs():
    return [torch.randn(3, 5, 7, 9) * 2 + 1, torch.randn(4, 3, 11)]


def get_init_inputs():
    return []
'''


def test_batch_norm_training_statistics_and_running_stats(tmp_path):
    import importlib.util

    from submitters.builtin.writer import write

    written = write(BATCH_NORM)
    (tmp_path / "ref.py").write_text(BATCH_NORM)
    (tmp_path / "cand.py").write_text(written.source)
    modules = []
    for name in ("ref", "cand"):
        spec = importlib.util.spec_from_file_location(f"bn_{name}", tmp_path / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules.append(module)
    ref, cand = modules
    model, new = ref.Model(), cand.ModelNew()
    new.load_state_dict(model.state_dict())
    torch.manual_seed(3)
    for _ in range(2):  # the second call sees the running statistics the first one updated
        inputs = ref.get_inputs()
        with torch.no_grad():
            for want, got in zip(model(*inputs), new(*inputs)):
                torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    for key, value in model.state_dict().items():
        torch.testing.assert_close(new.state_dict()[key], value, atol=1e-5, rtol=1e-5, msg=key)
    model.eval(), new.eval()
    inputs = ref.get_inputs()
    with torch.no_grad():
        for want, got in zip(model(*inputs), new(*inputs)):
            torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)


ATTENTION = HEADER + '''
class Model(nn.Module):
    def __init__(self, causal, scale):
        super().__init__()
        self.causal, self.scale = causal, scale

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=self.causal, scale=self.scale)


def get_inputs():
    return [torch.randn(2, 3, 37, 24), torch.randn(2, 3, 45, 24), torch.randn(2, 3, 45, 20)]


def get_init_inputs():
    return [{causal}, {scale}]
'''


@pytest.mark.parametrize("causal,scale", [(False, None), (True, None), (True, 0.3)])
def test_attention_matches_pytorch(run_builtin, causal, scale):
    outcome = run_builtin(ATTENTION.replace("{causal}", str(causal)).replace("{scale}", str(scale)))
    assert "_tk_sdpa(" in outcome.source
    assert outcome.close, outcome.max_error
