"""Renaming parts and composing them into one ModelNew (run in-process here, with PyTorch parts)."""

from __future__ import annotations

import types

import torch

from harness.judge.evaluate import EvalOptions
from submitters.mkevolve.compose import compose
from submitters.mkevolve.rename import namespaced
from submitters.mkevolve.workspace import decompose
from tests.mkevolve import toys

EPILOGUE_PART = '''import torch
import torch.nn as nn

SCALE = 1.0


def _apply(x, bias):
    return torch.relu(x) * SCALE + bias


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(4, 1, 1))

    def forward(self, conv):
        return _apply(conv, self.bias)


def get_inputs():
    return []
'''

CONV_PART = '''import torch
import torch.nn as nn

SCALE = 99.0  # the same name as the other part's constant, with another value


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, kernel_size=3)

    def forward(self, x):
        return torch.nn.functional.conv2d(x, self.conv.weight, self.conv.bias)
'''


def load(source: str):
    module = types.ModuleType("composed_under_test")
    exec(compile(source, "composed.py", "exec"), module.__dict__)
    return module


def build(module, reference_module, init):
    torch.manual_seed(0)
    reference = reference_module.Model(*init)
    torch.manual_seed(1)  # another seed: only the by-name weight loading can make them agree
    new = module.ModelNew(*init)
    new.load_state_dict(reference.state_dict(), strict=False)
    return reference, new


def test_top_level_names_get_the_prefix_and_locals_that_shadow_them_do_not():
    source = '''import torch
BLOCK = 128


def kernel(x, BLOCK):
    return x * BLOCK


class ModelNew(torch.nn.Module):
    BLOCK = 4

    def forward(self, x):
        return kernel(x, BLOCK) + self.BLOCK
'''
    renamed = namespaced(source, "_p_")
    assert renamed.imports == ["import torch"]
    assert "def _p_kernel(x, BLOCK):\n    return x * BLOCK" in renamed.body
    assert "BLOCK = 4" in renamed.body and "_p_kernel(x, _p_BLOCK) + self.BLOCK" in renamed.body
    assert renamed.names["ModelNew"] == "_p_ModelNew"


def test_extension_names_are_made_unique_per_part():
    source = "from torch.utils.cpp_extension import load_inline\nmod = load_inline(name='ext', cpp_sources='')\n"
    assert "name='ext_p'" in namespaced(source, "_p_").body


def test_composition_of_verified_parts_computes_the_reference_with_its_weights():
    problem = toys.problem(toys.CONV_RELU_BIAS)
    decomposition, _ = decompose(problem, EvalOptions(timing=False), 6)
    conv, epilogue = decomposition.units
    source = compose(problem.source, decomposition, [(conv, CONV_PART), (epilogue, EPILOGUE_PART)], ["test"])
    reference, new = build(load(source), problem.module(), [3, 4])
    assert new._mk_s1.bias is new.bias and new._mk_s0.conv.weight is new.conv.weight
    x = torch.randn(2, 3, 8, 8)
    torch.testing.assert_close(new(x), reference(x))


def test_units_without_a_kernel_stay_as_the_traced_pytorch_code():
    problem = toys.problem(toys.CONV_RELU_BIAS)
    decomposition, _ = decompose(problem, EvalOptions(timing=False), 6)
    source = compose(problem.source, decomposition, [(decomposition.units[1], EPILOGUE_PART)], ["test"])
    assert "conv = self.conv(x)" in source and "self._mk_s1(conv)" in source
    reference, new = build(load(source), problem.module(), [3, 4])
    x = torch.randn(2, 3, 8, 8)
    torch.testing.assert_close(new(x), reference(x))


def test_composition_keeps_the_problems_constructor_signature_and_helpers():
    problem = toys.problem(toys.MLP)
    decomposition, _ = decompose(problem, EvalOptions(timing=False), 6)
    part = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.network = nn.Sequential(nn.Identity(), nn.Identity(), nn.Linear(32, 32))

    def forward(self, network_1):
        return torch.nn.functional.linear(network_1, self.network[2].weight, self.network[2].bias)
'''
    source = compose(problem.source, decomposition, [(decomposition.units[2], part)], ["test"])
    assert "def __init__(self, width):\n        super().__init__(width)" in source
    reference, new = build(load(source), problem.module(), [32])
    x = torch.randn(4, 32)
    torch.testing.assert_close(new(x), reference(x))


def test_coarse_composition_redirects_the_child_call_and_keeps_the_rest_of_forward():
    problem = toys.problem(toys.UNTRACEABLE)
    decomposition, _ = decompose(problem, EvalOptions(timing=False), 6)
    part = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.second = nn.Linear(8, 4)

    def forward(self, x0):
        return x0 @ self.second.weight.t() + self.second.bias
'''
    source = compose(problem.source, decomposition, [(decomposition.units[1], part)], ["test"])
    assert "self._mk_s1(torch.tanh(h))" in source and "if h.sum() > 1000000000.0" in source
    reference, new = build(load(source), problem.module(), [])
    x = torch.randn(3, 8)
    torch.testing.assert_close(new(x), reference(x))
