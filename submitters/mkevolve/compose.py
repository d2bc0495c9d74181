"""One self-contained ``ModelNew`` file from the verified sub-kernels.

Layout of the composed file:

1. the imports of the problem and of every part, merged;
2. the problem's own top-level helpers and constants (what its constructor may use);
3. each part (a verified sub-kernel file) with its top-level names under ``_mk_<unit>_``;
4. ``_MkBase``: the problem's ``Model`` without ``forward``, so the constructor, the submodules and
   the parameter names are the reference's own (the judge's by-name weight loading then fills them);
5. ``_mk_attach``: registers each part and makes it share the owner's parameters and buffers of the
   same name, so a part reads exactly the weights the judge loaded;
6. ``ModelNew(_MkBase)`` with the problem's constructor signature and the composed forward: each
   part called where its unit was, everything else the traced PyTorch code.
"""

from __future__ import annotations

import ast
from typing import Any

from submitters.mkevolve.rename import namespaced
from submitters.mkevolve.units import Unit

METADATA = {"SMALL", "FIXES", "EXCLUDE"}
PROBLEM_FUNCTIONS = {"get_inputs", "get_init_inputs"}
BASE_IMPORTS = ["import torch", "import torch.nn as nn"]

ATTACH = '''def _mk_attach(owner, parts):
    """Register each part under its name, sharing the owner's parameters and buffers of the same
    name: the judge loads the reference's weights into the owner's names only."""
    shared = dict(owner.named_parameters(remove_duplicate=False))
    shared.update(owner.named_buffers(remove_duplicate=False))
    for name, part in parts.items():
        tensors = list(part.named_parameters(remove_duplicate=False)) + list(part.named_buffers(remove_duplicate=False))
        for key, tensor in tensors:
            own = shared.get(key)
            same_kind = isinstance(own, nn.Parameter) == isinstance(tensor, nn.Parameter)
            if own is not None and same_kind and own.shape == tensor.shape and own.dtype == tensor.dtype:
                holder, _, leaf = key.rpartition(".")
                setattr(part.get_submodule(holder) if holder else part, leaf, own)
        owner.add_module(name, part)'''


def attribute(unit: Unit) -> str:
    return f"_mk_{unit.name}"


def compose(problem_source: str, decomposition: Any, kernels: list[tuple[Unit, str]], notes: list[str]) -> str:
    """The composed source; ``kernels`` are (unit, verified source) pairs, in model order."""
    if decomposition.mode == "whole":
        return kernels[0][1]
    problem = ProblemParts(problem_source)
    parts = [(unit, namespaced(source, f"{attribute(unit)}_")) for unit, source in kernels]
    forward, forward_imports = decomposition.composed_forward({attribute(unit): unit for unit, _ in kernels})
    imports = BASE_IMPORTS + forward_imports + problem.imports + [line for _, part in parts for line in part.imports]
    sections = [
        "\n".join(f"# {line}" for line in notes),
        "\n".join(dict.fromkeys(imports)),
        problem.preamble,
        *(f"# -- unit {unit.name} --------\n{part.body}" for unit, part in parts),
        problem.base_class(),
        ATTACH,
        _model_new(problem, [(attribute(unit), part.names["ModelNew"]) for unit, part in parts], forward),
    ]
    return "\n\n\n".join(section.strip("\n") for section in sections if section.strip()) + "\n"


class ProblemParts:
    """A problem file taken apart: its imports, its other top-level code, and its ``Model`` class."""

    def __init__(self, source: str):
        tree = ast.parse(source)
        self.imports = [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        models = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"]
        if not models:
            raise ValueError("the problem defines no top-level class Model")
        self.model = models[0]
        kept = [n for n in tree.body if not self._skipped(n)]
        self.preamble = "".join(("\n\n\n" if isinstance(n, (ast.FunctionDef, ast.ClassDef)) or index and isinstance(
            kept[index - 1], (ast.FunctionDef, ast.ClassDef)) else "\n") + ast.unparse(n) for index, n in enumerate(kept))

    def _skipped(self, node: ast.stmt) -> bool:
        if node is self.model or isinstance(node, (ast.Import, ast.ImportFrom)):
            return True
        if isinstance(node, ast.FunctionDef) and node.name in PROBLEM_FUNCTIONS:
            return True
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return True  # the module docstring
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return True
        targets = node.targets if isinstance(node, ast.Assign) else []
        return any(isinstance(t, ast.Name) and t.id in METADATA for t in targets)

    def base_class(self) -> str:
        """``Model`` renamed ``_MkBase``, without forward; ``super(Model, self)`` becomes ``super()``."""
        import copy

        base = copy.deepcopy(self.model)
        base.name = "_MkBase"
        base.body = [n for n in base.body if not (isinstance(n, ast.FunctionDef) and n.name == "forward")] or \
            [ast.Pass()]
        base = _BaseRewriter().visit(base)
        return ast.unparse(ast.fix_missing_locations(base))

    def init_signature(self) -> tuple[str, str]:
        """(parameters, call arguments) of Model's constructor: ``self, a, b=2`` and ``a, b``."""
        inits = [n for n in self.model.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"]
        if not inits:
            return "self", ""
        arguments = inits[0].args
        call = [a.arg for a in (arguments.posonlyargs + arguments.args)[1:]]
        call += [f"*{arguments.vararg.arg}"] if arguments.vararg else []
        call += [f"{a.arg}={a.arg}" for a in arguments.kwonlyargs]
        call += [f"**{arguments.kwarg.arg}"] if arguments.kwarg else []
        return ast.unparse(arguments), ", ".join(call)

    def forward(self) -> ast.FunctionDef:
        for node in self.model.body:
            if isinstance(node, ast.FunctionDef) and node.name == "forward":
                return node
        raise ValueError("the problem's Model has no forward")


class _BaseRewriter(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super":
            node.args = []
        return node

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id == "Model":
            node.id = "_MkBase"
        return node


def _model_new(problem: ProblemParts, parts: list[tuple[str, str]], forward: str) -> str:
    parameters, call = problem.init_signature()
    made = ", ".join(f"{name!r}: {cls}()" for name, cls in parts)
    lines = ["class ModelNew(_MkBase):", f"    def __init__({parameters}):", f"        super().__init__({call})",
             f"        _mk_attach(self, {{{made}}})", ""]
    lines += ["    " + line if line.strip() else "" for line in forward.rstrip().splitlines()]
    return "\n".join(lines)
