"""Write the ModelNew source for a reference: trace, lower, plan, emit, assemble.

``write(reference_source, variant)`` returns a ``Written`` (the file and a plain account of what
it does) or raises NoRule naming what the rules do not cover.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from submitters.builtin import analyze, library, lower, plan as planning
from submitters.builtin.emit_matmul import emit_matmul
from submitters.builtin.emit_ops import HELPERS, helpers_used
from submitters.builtin.emit_pointwise import emit_pointwise
from submitters.builtin.emit_rows import emit_rows, emit_scan
from submitters.builtin.ir import NoRule, Value
from submitters.builtin.emit_common import Emitted, Tuning, forward_expr, launch_helpers

MODEL = "builtin-rules-v1"


@dataclass(frozen=True)
class Variant:
    """One way of writing the kernels. Later variants are more conservative or differently tuned."""

    name: str
    tuning: Tuning = Tuning()
    options: planning.PlanOptions = planning.PlanOptions()
    note: str = ""


VARIANTS = {
    "default": Variant("default", note="fused kernels with the default block sizes"),
    "conservative": Variant(
        "conservative",
        Tuning(name="conservative", pointwise_block=256, row_tile=1024, row_max_cols=16,
               matmul_fp32=(32, 32, 32, 4, 2), matmul_half=(64, 64, 32, 4, 2)),
        planning.PlanOptions(fuse_matmul_epilogue=False, fuse_prologue=False, fuse_siblings=False),
        note="smaller blocks; the matmul epilogue, the ops before each reduction and independent ops in kernels "
             "of their own",
    ),
    "wide": Variant(
        "wide",
        Tuning(name="wide", pointwise_block=2048, pointwise_warps=8, row_tile=8192, row_max_cols=128,
               matmul_fp32=(128, 64, 32, 8, 3), matmul_half=(128, 256, 64, 8, 3)),
        note="larger tiles and more warps per program",
    ),
    "narrow": Variant(
        "narrow",
        Tuning(name="narrow", pointwise_block=512, row_tile=2048, row_max_cols=32,
               matmul_fp32=(32, 64, 32, 4, 4), matmul_half=(64, 128, 32, 4, 4)),
        note="smaller tiles, more programs in flight",
    ),
}
FALLBACK = "conservative"                 # what a failed attempt is retried with
TUNING_ORDER = ("default", "wide", "narrow")  # what an "ok, make it faster" request walks through

_EMITTERS = {"pointwise": emit_pointwise, "rows": emit_rows, "scan": emit_scan, "matmul": emit_matmul}


@dataclass
class Written:
    source: str
    variant: str
    kernels: list[str] = field(default_factory=list)   # one line per kernel
    kept: list[str] = field(default_factory=list)      # what stays in PyTorch


def write(reference: str, variant: str = "default") -> Written:
    chosen = VARIANTS[variant]
    traced = analyze.trace(reference)
    program = lower.lower(traced)
    the_plan = planning.plan(program, chosen.options)
    emitted = [_EMITTERS[group.kind](index, group, the_plan, chosen.tuning) for index, group in
               enumerate(the_plan.groups)]
    by_group = {id(group): item for group, item in zip(the_plan.groups, emitted)}
    forward = _forward(traced, the_plan, by_group)
    steps = [step for step in the_plan.steps if isinstance(step, lower.Kept)]
    kept = [_kept_label(step) for step in steps if not step.library]
    used = {step.library for step in steps if step.library}
    summaries = [e.summary for e in emitted] + [f"library kernel: {label}" for label in library.describe(used)]
    source = _assemble(traced, chosen, emitted, forward, summaries, kept, used)
    return Written(source=source, variant=variant, kernels=summaries, kept=[k for k in kept if k])


# -- forward ---------------------------------------------------------------------------------------

def _forward(traced: analyze.Traced, the_plan: planning.Plan, by_group: dict) -> list[str]:
    env = dict(the_plan.program.env)
    env[_ATTRIBUTES] = _int_attributes(traced.model)
    lines = [f"    def forward({traced.forward_args}):"]
    for step in the_plan.steps:
        if isinstance(step, lower.Kept):
            lines.append(f"        {step.result.name} = {_call_source(step.node, env, step.library)}")
        else:
            emitted: Emitted = by_group[id(step)]
            targets = ", ".join(v.name for v in emitted.outputs)
            lines.append(f"        {targets} = {emitted.launcher_name}({', '.join(emitted.inputs)})")
    lines.append(f"        return {_structure(the_plan.program.output)}")
    return lines


def _structure(value: Any) -> str:
    if isinstance(value, tuple):
        inner = ", ".join(_structure(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_structure(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_structure(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Value):
        return forward_expr(value)
    return repr(value)


def _call_source(node: Any, env: dict, library_function: str | None = None) -> str:
    """The Python source of a call kept in PyTorch, with its inputs renamed to forward's variables;
    with ``library_function``, the call goes to that Triton template instead (same arguments)."""
    import operator

    sizes = _is_shape_call(node)
    first = 1 if node.op == "call_method" else 0  # a method's first argument is the tensor itself
    args = [_arg_source(a, env, sizes and index >= first) for index, a in enumerate(node.args)]
    kwargs = [f"{k}={_arg_source(v, env, sizes)}" for k, v in node.kwargs.items()]
    joined = ", ".join(args + kwargs)
    if library_function and node.op == "call_module":
        return f"{library_function}({', '.join([lower.attribute_path(node.target)] + args + kwargs)})"
    if library_function:
        return f"{library_function}({joined})"
    if node.op == "call_module":
        return f"{lower.attribute_path(node.target)}({joined})"
    if node.op == "call_method":
        rest = ", ".join(args[1:] + kwargs)
        return f"{args[0]}.{node.target}({rest})"
    target = node.target
    infix = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
             operator.floordiv: "//", operator.mod: "%", operator.pow: "**"}
    if target in infix and len(args) == 2:
        return f"({args[0]} {infix[target]} {args[1]})"
    if target is operator.getitem:
        return f"{args[0]}[{args[1]}]"
    if target is getattr:
        return f"{args[0]}.{node.args[1]}"
    if target is operator.neg:
        return f"(-{args[0]})"
    return f"{_qualified_name(target)}({joined})"


def _qualified_name(target: Any) -> str:
    from torch.fx.node import _get_qualified_name

    name = _get_qualified_name(target)
    if name.startswith("builtins."):
        return name[len("builtins."):]
    if not name.startswith(("torch.", "math.")):
        raise NoRule(f"a call to {name} that the generated file could not name")
    return name


_SHAPE_METHODS = {"view", "reshape", "expand", "unflatten", "new_zeros", "new_ones", "new_empty", "repeat", "split"}


def _is_shape_call(node: Any) -> bool:
    """Calls whose arguments after the tensor are sizes (where a folded attribute may hide)."""
    import operator

    if node.op == "call_method":
        return node.target in _SHAPE_METHODS
    if node.target in (operator.floordiv, operator.mul, operator.truediv):  # size arithmetic: x.size(1) // groups
        return True
    return node.op == "call_function" and getattr(node.target, "__name__", "") in ("reshape", "zeros", "ones", "empty")


def _arg_source(arg: Any, env: dict, sizes: bool = False) -> str:
    import torch
    import torch.fx

    if isinstance(arg, torch.fx.Node):
        found = env[arg]
        if not isinstance(found, Value):
            raise NoRule(f"{arg.name} used as a whole")
        return forward_expr(found)
    if isinstance(arg, tuple):
        inner = ", ".join(_arg_source(a, env, sizes) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, list):
        return "[" + ", ".join(_arg_source(a, env, sizes) for a in arg) + "]"
    if isinstance(arg, slice):
        return f"slice({_arg_source(arg.start, env)}, {_arg_source(arg.stop, env)}, {_arg_source(arg.step, env)})"
    if arg is Ellipsis:
        return "..."
    if isinstance(arg, (torch.dtype, torch.memory_format, torch.layout)):
        return str(arg)
    if isinstance(arg, torch.device):
        return f"torch.device({str(arg)!r})"
    if sizes and isinstance(arg, int) and not isinstance(arg, bool) and arg in env[_ATTRIBUTES]:
        return env[_ATTRIBUTES][arg]
    if arg is None or isinstance(arg, (bool, int, float, str)):
        return repr(arg)
    raise NoRule(f"an argument of type {type(arg).__name__} in a call kept in PyTorch")


_ATTRIBUTES = object()  # env key: int value -> "self.<attribute>" for the model's own int attributes


def _int_attributes(model: Any) -> dict[int, str]:
    """Ints that fx folded into a kept call (``x.view(-1, self.features)``) are written back as the
    attribute they came from when exactly one attribute holds that value: sizes then follow the
    constructor arguments instead of the traced ones. Small values (dims, -1) stay literal."""
    found: dict[int, list[str]] = {}
    for prefix, module in model.named_modules():  # the problem's own submodules too: ``self.attn.n_embd``
        if prefix and type(module).__module__.startswith("torch.nn"):
            continue  # nn.Linear's in_features and the like repeat the sizes; the problem's attributes name them
        for name, value in vars(module).items():
            if isinstance(value, int) and not isinstance(value, bool) and not name.startswith("_") and abs(value) > 2:
                found.setdefault(value, []).append(f"{prefix}.{name}" if prefix else name)
    return {value: lower.attribute_path(names[0]) for value, names in found.items() if len(names) == 1}


def _kept_label(step: Any) -> str:
    node = step.node
    if node.op == "call_module":
        return str(node.target)
    name = getattr(node.target, "__name__", str(node.target))
    return "" if name in ("getitem", "getattr", "size", "dim") else name


# -- the file -----------------------------------------------------------------------------------------

_HEADER = '''# Written by Crucible's builtin provider ({model}): a rule-based kernel writer, NOT a language model.
# builtin-variant: {variant}
'''


def _assemble(traced: analyze.Traced, variant: Variant, emitted: list[Emitted], forward: list[str],
              summaries: list[str], kept: list[str], used: set[str]) -> str:
    kernels = "\n\n".join(e.kernel for e in emitted)
    helpers = [HELPERS[name] for name in helpers_used(kernels)]
    parts = [
        _HEADER.format(model=MODEL, variant=variant.name).rstrip()
        + "\n" + "\n".join(f"# {line}" for line in summaries)
        + ("\n# kept in PyTorch: " + ", ".join(dict.fromkeys(k for k in kept if k)) if any(kept) else ""),
        "import functools\nimport math\n\nimport torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl",
        traced.preamble,
        *helpers,
        *_support(emitted),
        *library.source(used),
        *(e.kernel for e in emitted),
        *(e.launcher for e in emitted),
        "class ModelNew(nn.Module):\n" + traced.init_body.rstrip("\n") + "\n\n" + "\n".join(forward),
    ]
    return "\n\n\n".join(part.strip("\n") for part in parts if part.strip()) + "\n"


def _support(emitted: list[Emitted]) -> list[str]:
    return launch_helpers({name for item in emitted for name in item.support})
