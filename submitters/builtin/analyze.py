"""Trace a problem without running it: build ``Model`` and its inputs on the meta device, trace
``forward`` with torch.fx, and record the shape and dtype of every value.

The meta device allocates nothing, so full-size problems (gigabytes of inputs) trace in
milliseconds. The source is also taken apart with ``ast`` so that ``ModelNew`` can reuse the
reference's constructor verbatim (same submodules, same parameter names, same initialisation).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from submitters.builtin.ir import NoRule

_PROBLEM_FUNCTIONS = {"get_inputs", "get_init_inputs"}
_METADATA = {"SMALL", "FIXES", "EXCLUDE"}
_OWN_IMPORTS = {"import functools", "import math", "import torch", "import torch.nn as nn", "import triton", "import triton.language as tl"}


@dataclass
class Traced:
    source: str
    model: Any                       # the Model instance, on the meta device
    graph_module: Any                # torch.fx.GraphModule
    values: dict = field(default_factory=dict)   # fx.Node -> traced value (meta tensor, number, tuple)
    forward_args: str = "self"       # the parameter list of Model.forward, as source
    preamble: str = ""               # imports, helpers and constants ModelNew's constructor needs
    init_body: str = ""              # ModelNew's class body without forward (constructor, helpers)


def trace(source: str) -> Traced:
    """Trace the ``Model`` defined in ``source``; NoRule when that is not possible."""
    tree = _parse(source)
    model_class = _model_class(tree)
    namespace = _execute(source)
    model, inputs = _build_on_meta(namespace)
    graph_module = _symbolic_trace(model)
    values = _record_values(graph_module, inputs)
    return Traced(
        source=source, model=model, graph_module=graph_module, values=values,
        forward_args=_forward_args(model_class), preamble=_preamble(tree, model_class),
        init_body=_class_body_without_forward(model_class),
    )


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as error:
        raise NoRule(f"a reference that is not valid Python ({error.msg}, line {error.lineno})") from None


def _model_class(tree: ast.Module) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            return node
    raise NoRule("a reference without a top-level `class Model`")


def _execute(source: str) -> dict:
    namespace: dict[str, Any] = {"__name__": "crucible_builtin_reference"}
    try:
        exec(compile(source, "<reference>", "exec"), namespace)  # the problem is trusted code
    except Exception as error:  # the reference itself is broken: say so rather than crash the writer
        raise NoRule(f"a reference that fails to import ({type(error).__name__}: {error})") from None
    for name in ("Model", "get_inputs"):
        if name not in namespace:
            raise NoRule(f"a reference without `{name}`")
    return namespace


def _build_on_meta(namespace: dict) -> tuple[Any, list]:
    import torch

    init_inputs = namespace.get("get_init_inputs", lambda: [])()
    try:
        with torch.device("meta"):
            model = namespace["Model"](*init_inputs)
            inputs = list(namespace["get_inputs"]())
    except Exception as error:
        raise NoRule(f"a model that cannot be built on the meta device ({type(error).__name__}: {error})") from None
    return model, inputs


def _symbolic_trace(model: Any) -> Any:
    import torch.fx

    try:
        graph = _BufferTracer().trace(model)
        return torch.fx.GraphModule(model, graph, type(model).__name__)
    except Exception as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise NoRule(f"a forward that torch.fx cannot trace ({first_line[:160]})") from None


def _buffer_tracer_class() -> Any:
    import torch
    import torch.fx

    class BufferTracer(torch.fx.Tracer):
        """fx proxies parameters but hands buffers over as tensors, so ``self.mask[:, :, :t, :t]`` with a
        traced size ``t`` fails; here a registered buffer read in forward is a ``get_attr`` node too."""

        def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict) -> Any:
            if isinstance(attr_val, torch.Tensor) and not isinstance(attr_val, torch.nn.Parameter):
                for name, buffer in self.root.named_buffers():
                    if buffer is attr_val:
                        if name not in parameter_proxy_cache:
                            parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                        return parameter_proxy_cache[name]
            return super().getattr(attr, attr_val, parameter_proxy_cache)

    return BufferTracer


def _BufferTracer() -> Any:  # noqa: N802 (built lazily: torch is imported only when a trace is asked for)
    return _buffer_tracer_class()()


def _record_values(graph_module: Any, inputs: list) -> dict:
    import torch.fx

    values: dict = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, node):
            result = super().run_node(node)
            values[node] = result
            return result

    try:
        Recorder(graph_module).run(*inputs)
    except Exception as error:
        raise NoRule(f"a forward that does not run on the meta device ({type(error).__name__}: {str(error)[:160]})") \
            from None
    return values


def _forward_args(model_class: ast.ClassDef) -> str:
    for node in model_class.body:
        if isinstance(node, ast.FunctionDef) and node.name == "forward":
            if node.args.vararg or node.args.kwarg:
                raise NoRule("a forward with *args or **kwargs")
            return ast.unparse(node.args)
    raise NoRule("a Model without forward")


def _class_body_without_forward(model_class: ast.ClassDef) -> str:
    body = [node for node in model_class.body if not (isinstance(node, ast.FunctionDef) and node.name == "forward")]
    body = [_SuperRewriter().visit(node) for node in body]
    if not body:
        return "    pass\n"
    text = "\n\n".join(ast.unparse(ast.fix_missing_locations(node)) for node in body)
    return "".join("    " + line + "\n" if line.strip() else "\n" for line in text.splitlines())


class _SuperRewriter(ast.NodeTransformer):
    """``super(Model, self)`` would fail inside ModelNew (not a subclass of Model): use ``super()``."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super" and node.args:
            node.args = []
        return node


def _preamble(tree: ast.Module, model_class: ast.ClassDef) -> str:
    """Imports, helper definitions and the constants that Model's body refers to."""
    kept = []
    used = _free_names(model_class)
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and ast.unparse(node) not in _OWN_IMPORTS:
            kept.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name not in _PROBLEM_FUNCTIONS | {"Model"}:
            kept.append(node)
            used |= _free_names(node)
    assignments = [n for n in tree.body if isinstance(n, ast.Assign) and not _assigned_names(n) & _METADATA]
    changed = True
    while changed:  # constants can be defined from other constants: follow them to a fixed point
        changed = False
        for node in assignments:
            if node not in kept and _assigned_names(node) & used:
                kept.append(node)
                used |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
                changed = True
    kept.sort(key=lambda node: node.lineno)
    return "\n".join(ast.unparse(node) for node in kept)


def _free_names(node: ast.AST) -> set[str]:
    """Names read in ``node`` that it does not bind itself (parameters, local assignments)."""
    loaded, bound, defaults = set(), set(), set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (loaded if isinstance(sub.ctx, ast.Load) else bound).add(sub.id)
        elif isinstance(sub, ast.arg):
            bound.add(sub.arg)
        elif isinstance(sub, (ast.FunctionDef, ast.Lambda)):  # defaults are read in the enclosing scope
            for default in [*sub.args.defaults, *sub.args.kw_defaults]:
                defaults |= {n.id for n in ast.walk(default) if isinstance(n, ast.Name)} if default else set()
    return (loaded - bound) | defaults


def _assigned_names(node: ast.Assign) -> set[str]:
    names = set()
    for target in node.targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                names.add(sub.id)
    return names
