"""The writer's parts: reading conversations, indexing broadcast operands, planning kernels, and
the limits it states instead of guessing."""

from __future__ import annotations

import pytest

from submitters.builtin import prompt
from submitters.builtin.ir import NoRule

HEADER = "import torch\nimport torch.nn as nn\n\n"


def source(forward: str, inputs: str = "[torch.randn(2, 4, 6, 6)]", init: str = "[]", body: str = "") -> str:
    return (HEADER + "class Model(nn.Module):\n    def __init__(self, *args):\n        super().__init__()\n"
            + (body or "        pass\n") + "\n    def forward(self, x):\n" + forward
            + f"\n\ndef get_inputs():\n    return {inputs}\n\ndef get_init_inputs():\n    return {init}\n")


def plan_of(text: str):
    from submitters.builtin import analyze, lower, plan

    return plan.plan(lower.lower(analyze.trace(text)))


def test_conversation_reader_tells_reference_from_candidate_and_reads_last_feedback():
    messages = [
        {"role": "user", "content": "Task:\n```python\nclass Model(nn.Module):\n    pass\n```"},
        {"role": "assistant", "content": "```python\n# builtin-variant: wide\nclass ModelNew(nn.Module):\n    pass\n```"},
        {"role": "user", "content": "Feedback: timeout\nthe kernel hung"},
    ]
    read = prompt.read(messages)
    assert read.reference.startswith("class Model(")
    assert read.candidate.startswith("# builtin-variant: wide")
    assert (read.feedback, read.previous_variant, read.analysis_request) == ("timeout", "wide", False)
    assert prompt.read(messages[:2]).feedback is None


def test_broadcast_bias_is_indexed_by_its_channel_run():
    from submitters.builtin.emit_common import Kernel, Stage

    kernel = Kernel("k", group=None, plan=None)
    stage = Stage("D", (8, 16, 5, 7), "flat", "mask", "shape")
    assert kernel.index_expression((16, 1, 1), stage) == "((flat // (D2 * D3)) % (D1))"
    assert kernel.index_expression((8, 16, 5, 7), stage) == "flat"
    assert kernel.index_expression((1,), stage) is None


@pytest.mark.parametrize("operand", [(4, 1, 1), (5, 6), (3, 1, 1, 6), (6,), (4, 1, 6), (3, 4, 1, 1), (1, 4, 5, 1)])
def test_broadcast_index_expressions_pick_the_element_torch_broadcasting_picks(operand):
    import torch

    from submitters.builtin.emit_common import Kernel, Stage

    shape = (3, 4, 5, 6)
    expression = Kernel("k", None, None).index_expression(operand, Stage("D", shape, "flat", "mask", "shape"))
    flat = torch.arange(torch.Size(shape).numel())
    index = eval(expression, {}, {"flat": flat, **{f"D{d}": size for d, size in enumerate(shape)}})
    numbered = torch.arange(torch.Size(operand).numel()).reshape(operand)
    assert torch.equal(index, numbered.expand(shape).reshape(-1))


def test_softmax_becomes_one_row_kernel_with_two_reductions():
    planned = plan_of(source("        return torch.softmax(x, dim=1)"))
    (group,) = planned.groups
    assert group.kind == "rows" and [r.kind for r in group.reductions] == ["max", "sum"]


def test_convolution_is_a_library_kernel_and_the_chain_after_it_is_one_kernel():
    body = "        self.conv = nn.Conv2d(4, 8, 3)\n        self.bias = nn.Parameter(torch.randn(8, 1, 1))\n"
    planned = plan_of(source("        return torch.relu(self.conv(x) + self.bias) * 2", body=body))
    (group,) = planned.groups
    assert group.kind == "pointwise" and [m.op for m in group.members] == ["add", "relu", "mul"]
    (conv,) = [step for step in planned.steps if not hasattr(step, "kind")]
    assert conv.library == "_tk_conv_module"


def test_linear_bias_and_activation_fuse_into_the_matmul_epilogue():
    body = "        self.fc = nn.Linear(6, 5)\n"
    planned = plan_of(source("        return torch.tanh(self.fc(x))", inputs="[torch.randn(3, 6)]", body=body))
    (group,) = planned.groups
    assert group.kind == "matmul" and [getattr(m, "op", "matmul") for m in group.members] == ["matmul", "add", "tanh"]


@pytest.mark.parametrize("forward, what", [
    ("        return torch.sort(x, dim=1)[0]", "torch.sort"),
    ("        return x.sum(dim=(1, 3))", "non-adjacent dims"),
    ("        return x ** x", "tensor exponent"),
])
def test_unknown_ops_raise_no_rule_naming_them(forward, what):
    with pytest.raises(NoRule, match=what):
        plan_of(source(forward))


def test_model_that_is_all_pytorch_anchors_is_refused():
    body = "        self.up = nn.Upsample(scale_factor=2)\n"
    with pytest.raises(NoRule, match="stays in PyTorch"):
        plan_of(source("        return self.up(x)", body=body))


def test_a_lone_convolution_is_written_as_a_library_kernel():
    body = "        self.conv = nn.Conv2d(4, 8, 3, padding_mode='zeros')\n"
    planned = plan_of(source("        return self.conv(x)", body=body))
    assert not planned.groups and [step.library for step in planned.steps] == ["_tk_conv_module"]


def test_a_convolution_with_reflect_padding_stays_in_pytorch():
    body = "        self.conv = nn.Conv2d(4, 8, 3, padding=1, padding_mode='reflect')\n"
    with pytest.raises(NoRule, match="stays in PyTorch"):
        plan_of(source("        return self.conv(x)", body=body))


def test_full_size_reference_is_traced_on_the_meta_device_without_allocating():
    import time

    huge = source("        return torch.relu(x)", inputs="[torch.randn(4096, 393216)]")  # 6.4 GB if real
    started = time.time()
    planned = plan_of(huge)
    assert planned.groups[0].full_shape == (4096, 393216) and time.time() - started < 10


def test_integer_arithmetic_is_refused_rather_than_computed_in_floats():
    text = source("        return x + 1", inputs="[torch.randint(0, 5, (3, 4))]")
    with pytest.raises(NoRule, match="integer arithmetic"):
        plan_of(text)


def test_elementwise_min_with_a_tensor_constant_is_a_pointwise_minimum():
    planned = plan_of(source("        return torch.min(x, torch.tensor(0.5)) * 2"))
    (group,) = planned.groups
    assert [m.op for m in group.members] == ["minimum", "mul"]
