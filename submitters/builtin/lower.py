"""Lower a traced model into the writer's IR: kept PyTorch statements and computed values.

Every fx node becomes one of: a materialized tensor (inputs, parameters, the outputs of calls kept
in PyTorch such as convolutions, pooling and reshapes), a Python-level value (sizes), an alias
(clone, detach, an in-place op's result), or computed values for the Triton kernels (pointwise,
reductions, matmuls; composite ops such as softmax and the norms are decomposed here). A call
the writer does not know raises NoRule naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from submitters.builtin import decompose, library, patterns
from submitters.builtin.analyze import Traced
from submitters.builtin.ir import NoRule, Scalar, Tensor, Value, is_computed
from submitters.builtin.names import ReduceTuple, attribute_path, python_name  # noqa: F401  (users import them from here)

@dataclass
class Kept:
    """A statement kept in PyTorch: ``result = <the node's call>``."""

    node: Any
    result: Value
    library: str | None = None   # a Triton library function that replaces the PyTorch call (library.py)


@dataclass
class Program:
    traced: Traced
    items: list = field(default_factory=list)    # Kept and computed Values, in execution order
    env: dict = field(default_factory=dict)      # fx.Node -> Value (or a ReduceTuple)
    output: Any = None                           # the forward's return structure, over Values


def lower(traced: Traced) -> Program:
    program = Program(traced=traced)
    graph = traced.graph_module.graph
    _rewrite_in_place(graph, traced.graph_module)
    graph.eliminate_dead_code()
    lowering = _Lowering(program)
    for node in graph.nodes:
        lowering.visit(node)
    return program


class _Lowering:
    def __init__(self, program: Program):
        self.program = program
        self.traced = program.traced
        self.build = decompose.Builder(self)

    # -- helpers used by decompose.Builder -------------------------------------------------------

    def emit(self, value: Value) -> Value:
        self.program.items.append(value)
        return value

    def value(self, arg: Any) -> Value | None:
        """An fx argument as a Value: nodes through the environment, numbers as literals."""
        import torch.fx

        if arg is None or isinstance(arg, Value):
            return arg
        if isinstance(arg, torch.fx.Node):
            found = self.program.env[arg]
            if isinstance(found, ReduceTuple):
                raise NoRule(f"the (values, indices) pair of {found.kind} used as a whole")
            return found
        if isinstance(arg, (bool, int, float, str)):
            return Scalar(name="literal", shape=None, literal=arg)
        raise NoRule(f"an argument of type {type(arg).__name__}")

    def traced_value(self, node: Any) -> Any:
        return self.traced.values.get(node)

    # -- dispatch --------------------------------------------------------------------------------

    def visit(self, node: Any) -> None:
        handler = getattr(self, f"_visit_{node.op}")
        result = handler(node)
        if result is not None:
            self.program.env[node] = result

    def _visit_placeholder(self, node: Any) -> Value:
        return self._materialized(node, node.target)

    def _visit_output(self, node: Any) -> None:
        self.program.output = _map_structure(node.args[0], self.value)

    def _visit_get_attr(self, node: Any) -> Value:
        import torch

        found = self.traced.graph_module
        for part in node.target.split("."):
            found = getattr(found, part)
        if isinstance(found, torch.Tensor) and found.device.type != "meta":
            if found.numel() == 1:  # a constant made in forward, e.g. torch.tensor(0.5)
                return Scalar(name=node.name, shape=None, literal=found.item())
            raise NoRule("a tensor constant created inside forward")
        if isinstance(found, torch.Tensor):
            return Tensor(name=node.name, shape=tuple(found.shape), dtype=found.dtype, expr=attribute_path(node.target))
        return Scalar(name=node.name, shape=None, expr=attribute_path(node.target))

    def _visit_call_module(self, node: Any) -> Any:
        module = self.traced.graph_module.get_submodule(node.target)
        op = patterns.module_op(module)
        if op is None:
            raise NoRule(f"nn.{type(module).__name__}")
        if op == "anchor":
            return self._kept(node, library.for_module(module, node))
        if op == "dropout" and module.p > 0 and module.training:
            return self._kept(node)
        if op in ("dropout", "identity_alias"):
            return self.value(node.args[0])
        bound = patterns.bind(op, node.args, node.kwargs) if op not in ("linear", "layer_norm", "group_norm",
                                                                       "instance_norm", "rms_norm") else None
        if bound is not None:
            for param, attribute in patterns.MODULE_PARAMS.get(op, {}).items():
                bound[param] = getattr(module, attribute)
        return self.build.module_op(node, op, module, bound)

    def _visit_call_function(self, node: Any) -> Any:
        op = patterns.function_op(node.target)
        return self._call(node, op, node.args, node.kwargs, describe=_function_name(node.target))

    def _visit_call_method(self, node: Any) -> Any:
        op, _in_place = patterns.method_op(node.target)
        if op in ("float", "to", "type", "double", "half", "bfloat16") and self._is_tensor(node):
            return self._cast(node)
        return self._call(node, op, node.args, node.kwargs, describe=f"Tensor.{node.target}")

    def _call(self, node: Any, op: str | None, args: tuple, kwargs: dict, describe: str) -> Any:
        if not self._is_tensor_like(node):
            return self._kept(node)  # sizes, attributes and arithmetic on them: plain Python
        if op == "getitem" and isinstance(self.program.env.get(args[0]), ReduceTuple):
            return self.build.reduce_tuple_item(node, self.program.env[args[0]], args[1])
        if op == "getattr" and isinstance(self.program.env.get(args[0]), ReduceTuple) and args[1] in ("values", "indices"):
            return self.build.reduce_tuple_item(node, self.program.env[args[0]], 0 if args[1] == "values" else 1)
        if op in patterns.IDENTITIES:
            source = self.value(args[0])
            if op in ("contiguous", "clone") and not is_computed(source):
                return self._kept(node)  # a layout change later views rely on (kernel outputs are contiguous)
            return source
        if op in ("dropout", "dropout1d", "dropout2d", "dropout3d"):
            return self._dropout(node, args, kwargs)
        if op in patterns.ANCHOR_FUNCTIONS:
            return self._kept(node, library.for_function(op, node.target, args, kwargs))
        if op in patterns.VIEWS or op in patterns.FACTORIES or op == "getattr":
            return self._kept(node)
        if op is None:
            raise NoRule(describe)
        return self.build.function_op(node, op, args, kwargs, describe)

    # -- kept statements and small cases ---------------------------------------------------------

    def _kept(self, node: Any, library_function: str | None = None) -> Value:
        result = self._materialized(node, node.name)
        self.program.items.append(Kept(node=node, result=result, library=library_function))
        return result

    def _materialized(self, node: Any, name: str) -> Value:
        import torch

        traced = self.traced_value(node)
        if isinstance(traced, torch.Tensor):
            return Tensor(name=python_name(name), shape=tuple(traced.shape), dtype=traced.dtype, expr=python_name(name))
        return Scalar(name=python_name(name), shape=None, expr=python_name(name))

    def _dropout(self, node: Any, args: tuple, kwargs: dict) -> Any:
        p = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
        training = kwargs.get("training", args[2] if len(args) > 2 else True)
        if p == 0 or training is False:
            return self.value(args[0])
        return self._kept(node)

    def _cast(self, node: Any) -> Value:
        source = self.value(node.args[0])
        traced = self.traced_value(node)
        if source.dtype != traced.dtype:
            raise NoRule(f"a dtype conversion to {traced.dtype}")
        return source

    def _is_tensor(self, node: Any) -> bool:
        import torch

        return isinstance(self.traced_value(node), torch.Tensor)

    def _is_tensor_like(self, node: Any) -> bool:
        import torch

        traced = self.traced_value(node)
        if isinstance(traced, torch.Tensor):
            return True
        return isinstance(traced, (tuple, list)) and any(isinstance(t, torch.Tensor) for t in traced)


def _function_name(target: Any) -> str:
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", repr(target))
    if module.startswith("torch.nn.functional"):
        return f"F.{name}"
    return f"torch.{name}" if module.startswith("torch") or module == "" else f"{module}.{name}"


def _map_structure(structure: Any, function: Any) -> Any:
    if isinstance(structure, (tuple, list)):
        return type(structure)(_map_structure(item, function) for item in structure)
    if isinstance(structure, dict):
        return {key: _map_structure(item, function) for key, item in structure.items()}
    return function(structure)


def _rewrite_in_place(graph: Any, graph_module: Any) -> None:
    """After ``x.add_(y)`` (or ``inplace=True``), later readers of x read the op's result instead."""
    import torch.fx

    order = {node: index for index, node in enumerate(graph.nodes)}
    for node in list(graph.nodes):
        if not _is_in_place(node, graph_module) or not node.args or not isinstance(node.args[0], torch.fx.Node):
            continue
        mutated = node.args[0]
        for user in list(mutated.users):
            if user is not node and order[user] > order[node]:
                user.replace_input_with(mutated, node)


def _is_in_place(node: Any, graph_module: Any) -> bool:
    if node.op == "call_method":
        return patterns.method_op(node.target)[1]
    if node.kwargs.get("inplace") is True:
        return True
    if node.op == "call_module":
        return getattr(graph_module.get_submodule(node.target), "inplace", False) is True
    return False
