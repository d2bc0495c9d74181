"""Decomposing models into units: fx cuts, the coarse fallbacks, split and merge."""

from __future__ import annotations

import itertools

import pytest
import torch

from harness.judge.evaluate import EvalOptions
from submitters.mkevolve.modules import constructor_source
from submitters.mkevolve.units import PENDING, PYTORCH
from submitters.mkevolve.workspace import decompose
from tests.mkevolve import toys


def units_of(source: str, max_units: int = 6):
    decomposition, _ = decompose(toys.problem(source), EvalOptions(timing=False), max_units)
    return decomposition, [(decomposition.ops(u), u.status) for u in decomposition.units]


def names():
    return (f"n{i}" for i in itertools.count())


def test_conv_epilogue_becomes_its_own_unit_apart_from_the_convolution():
    decomposition, units = units_of(toys.CONV_RELU_BIAS)
    assert decomposition.mode == "fx"
    assert units == [(["Conv2d"], PENDING), (["relu", "add"], PENDING)]
    epilogue = decomposition.units[1]
    assert [n.name for n in decomposition.inputs(epilogue)] == ["conv"]
    assert decomposition.spec(epilogue).tensors.keys() == {"bias"}


def test_matmul_is_isolated_from_the_softmax_chain_after_it():
    decomposition, units = units_of(toys.MATMUL_SOFTMAX)
    assert units == [(["matmul"], PENDING), (["softmax", "mul"], PENDING)]


def test_mlp_units_keep_the_models_parameter_names_and_sequential_positions():
    decomposition, units = units_of(toys.MLP)
    assert [ops for ops, _ in units] == [["Linear"], ["ReLU"], ["Linear"], ["ReLU"], ["Linear"]]
    spec = decomposition.spec(decomposition.units[2])
    assert list(spec.modules) == ["network.2"] and spec.containers == {"network": 3}


def test_a_model_fx_cannot_trace_is_cut_at_the_child_modules_it_calls():
    decomposition, units = units_of(toys.UNTRACEABLE)
    assert decomposition.mode == "modules"
    assert units == [(["Linear"], PENDING), (["Linear"], PENDING)]
    assert "return self.first(x0)" in decomposition.spec(decomposition.units[0]).forward


def test_a_model_with_nothing_to_search_becomes_one_whole_unit():
    source = toys.HEADER + '''class Model(nn.Module):
    def forward(self, x):
        if x.sum() > 1e9:
            return x
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(4)]


def get_init_inputs():
    return []
'''
    decomposition, units = units_of(source)
    assert decomposition.mode == "whole" and len(units) == 1
    assert "fx:" in decomposition.why and "modules:" in decomposition.why


def test_size_queries_are_recomputed_where_used_instead_of_gluing_units_together():
    source = toys.HEADER + '''class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        b = x.size(0)
        y = torch.relu(self.fc(x))
        return y.view(b, 2, 4) * 2.0


def get_inputs():
    return [torch.randn(3, 8)]


def get_init_inputs():
    return []
'''
    _, units = units_of(source)
    assert [ops for ops, _ in units] == [["Linear"], ["relu", "mul"]]


def test_a_cut_never_separates_an_in_place_change_from_a_later_reader():
    source = toys.HEADER + '''class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.out = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        torch.relu_(h)
        return self.out(h) + h


def get_inputs():
    return [torch.randn(3, 8)]


def get_init_inputs():
    return []
'''
    decomposition, units = units_of(source)
    relu_unit = next(u for u in decomposition.units if "relu_" in decomposition.ops(u))
    assert "add" in decomposition.ops(relu_unit)  # the reader of h after relu_ shares its unit


def test_a_module_that_cannot_be_rebuilt_from_its_repr_stays_pytorch():
    source = toys.HEADER + '''class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(8, 2, batch_first=True)
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.attention(x, x, x)[0]
        return torch.relu(self.fc(y))


def get_inputs():
    return [torch.randn(2, 3, 8)]


def get_init_inputs():
    return []
'''
    decomposition, units = units_of(source)
    assert units[0] == (["MultiheadAttention"], PYTORCH)
    assert "cannot be rebuilt" in decomposition.units[0].note
    assert any(status == PENDING for _, status in units)


def test_coarsening_keeps_at_most_max_submodules_units():
    _, units = units_of(toys.MLP, max_units=2)
    assert len(units) == 2
    assert sum(len(ops) for ops, _ in units) == 5


def test_split_cuts_at_the_valid_cut_nearest_the_middle():
    decomposition, _ = units_of(toys.CHAIN)
    chain = decomposition.units[1]
    assert decomposition.ops(chain) == ["relu", "mul", "tanh"]
    left, right = decomposition.split(chain, names())
    assert (decomposition.ops(left), decomposition.ops(right)) in ((["relu"], ["mul", "tanh"]),
                                                                   (["relu", "mul"], ["tanh"]))
    assert left.origin == right.origin == {"split_from": chain.name}
    single = decomposition.split(left if len(decomposition.ops(left)) == 1 else right, names())
    assert single is None


def test_merge_joins_only_adjacent_units():
    decomposition, _ = units_of(toys.MLP)
    first, second, third = decomposition.units[:3]
    merged = decomposition.merge(first, second, names())
    assert decomposition.ops(merged) == ["Linear", "ReLU"] and merged.origin == {"merged_from": [first.name, second.name]}
    assert decomposition.merge(first, third, names()) is None
    assert decomposition.boundary_bytes(first, second) == 4 * 32 * 4  # the (4, 32) fp32 intermediate


@pytest.mark.parametrize("module", [nn for nn in (torch.nn.Conv2d(3, 4, 3, stride=2, bias=False),
                                                   torch.nn.BatchNorm2d(4, eps=1e-3),
                                                   torch.nn.LSTM(4, 8, num_layers=2, batch_first=True),
                                                   torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.GELU()))])
def test_constructor_source_rebuilds_the_same_layer(module):
    text = constructor_source(module)
    rebuilt = eval(text, {"nn": torch.nn, "torch": torch})
    assert repr(rebuilt) == repr(module)


def test_constructor_source_refuses_a_module_whose_repr_does_not_rebuild_it():
    assert constructor_source(torch.nn.MultiheadAttention(8, 2)) is None
