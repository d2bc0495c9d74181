"""The coarser decompositions, for models torch.fx cannot trace.

``ModuleDecomposition``: the units are the model's child modules that ``forward`` calls directly
(``self.c_attn(x)``) at one call site, with tensor arguments of one shape, and that can be rebuilt
from their repr. The
forward itself is kept as written; in the composition each such call is redirected to the child's
verified kernel. Everything between the calls stays PyTorch. These units are neither split nor merged.

``WholeDecomposition``: one unit, the model itself (when not even that applies); its sub-problem is
the problem, and the composition is the best kernel for it.
"""

from __future__ import annotations

import ast
from typing import Any

from submitters.mkevolve.graph import SubSpec
from submitters.mkevolve.modules import constructor_source
from submitters.mkevolve.units import PYTORCH, Undecomposable, Unit


class ModuleDecomposition:
    mode = "modules"

    def __init__(self, model: Any, forward: ast.FunctionDef, max_units: int):
        self.model = model
        self.forward_node = forward
        self.paths = _directly_called_children(model, forward)
        if not self.paths:
            raise Undecomposable("forward calls no child module that can be rebuilt from its repr")
        self.captured: dict[str, list] = {}
        self.units = [Unit(f"s{index}", index, index + 1) for index in range(len(self.paths))]
        for unit in self.units[max(1, max_units):]:
            unit.status, unit.note = PYTORCH, "kept in PyTorch: beyond max_submodules"

    def accept_capture(self, captured: dict[str, list], calls: dict[str, set]) -> None:
        """Keep the children that ran with tensor arguments of one signature (a child called in a loop
        is verified on its first call's inputs; the end-to-end check covers the others)."""
        import torch

        self.captured = captured
        for unit, path in zip(self.units, self.paths):
            arguments, signatures = captured.get(path, []), calls.get(path, set())
            if len(signatures) != 1:
                unit.status, unit.note = PYTORCH, (f"kept in PyTorch: {path} ran with {len(signatures)} different "
                                                   "argument shapes per forward")
            elif not all(isinstance(value, torch.Tensor) for value in arguments):
                unit.status, unit.note = PYTORCH, f"kept in PyTorch: {path} takes arguments that are not tensors"

    def path(self, unit: Unit) -> str:
        return self.paths[unit.start]

    def ops(self, unit: Unit) -> list[str]:
        return [type(self.model.get_submodule(self.path(unit))).__name__]

    def spec(self, unit: Unit) -> SubSpec:
        path = self.path(unit)
        names = [f"x{index}" for index in range(len(self.captured.get(path, [])))]
        joined = ", ".join(names)
        forward = f"def forward(self, {joined}):\n    return self.{path}({joined})\n"
        return SubSpec({path: self.model.get_submodule(path)}, {}, forward, names, [])

    def split(self, unit: Unit, names: Any) -> None:
        return None

    def merge(self, first: Unit, second: Unit, names: Any) -> None:
        return None

    def boundary_bytes(self, first: Unit, second: Unit) -> int:
        return 0

    def traffic_bytes(self, unit: Unit) -> int:
        return 0

    def composed_forward(self, kernels: dict[str, Unit]) -> tuple[str, list[str]]:
        """The problem's forward with ``self.<child>(...)`` calls redirected to the kernels' attributes."""
        import copy

        redirect = {self.path(unit): attribute for attribute, unit in kernels.items()}
        forward = _Redirect(redirect).visit(copy.deepcopy(self.forward_node))
        return ast.unparse(ast.fix_missing_locations(forward)) + "\n", []


class WholeDecomposition:
    mode = "whole"

    def __init__(self, why: str):
        self.why = why
        self.units = [Unit("s0", 0, 1)]

    def ops(self, unit: Unit) -> list[str]:
        return ["Model"]

    def split(self, unit: Unit, names: Any) -> None:
        return None

    def merge(self, first: Unit, second: Unit, names: Any) -> None:
        return None


def _directly_called_children(model: Any, forward: ast.FunctionDef) -> list[str]:
    """Children used in forward only as ``self.<name>(positional tensors...)``, once, rebuildable."""
    calls: dict[str, int] = {}
    for node in ast.walk(forward):
        target = _self_call(node)
        if target is not None:
            calls[target] = calls.get(target, 0) + 1
    children = dict(model.named_children())
    ordered = sorted(calls, key=lambda name: _first_line(forward, name))
    return [name for name in ordered if name in children and calls[name] == 1 and
            _uses(forward, name) == 1 and constructor_source(children[name]) is not None]


def _self_call(node: ast.AST) -> str | None:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    owner = node.func.value
    plain = not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)
    return node.func.attr if isinstance(owner, ast.Name) and owner.id == "self" and plain else None


def _uses(forward: ast.FunctionDef, name: str) -> int:
    return sum(1 for node in ast.walk(forward) if isinstance(node, ast.Attribute) and node.attr == name
               and isinstance(node.value, ast.Name) and node.value.id == "self")


def _first_line(forward: ast.FunctionDef, name: str) -> tuple[int, int]:
    found = [(n.lineno, n.col_offset) for n in ast.walk(forward) if _self_call(n) == name]
    return min(found)


class _Redirect(ast.NodeTransformer):
    def __init__(self, redirect: dict[str, str]):
        self.redirect = redirect

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        target = _self_call(node)
        if target in self.redirect:
            node.func = ast.Attribute(value=ast.Name("self", ast.Load()), attr=self.redirect[target], ctx=ast.Load())
        return node
