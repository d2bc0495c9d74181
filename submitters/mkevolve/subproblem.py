"""A unit as a KernelBench problem of its own, in two versions of one ``Model``.

- The *judge* version is what candidates are verified against: its ``Model`` loads the full model's
  weights for the modules it declares, and ``get_inputs`` returns the activations the unit received in
  a run of the full model, each trial multiplied by ``1 + NOISE * randn`` drawn on the judge's device
  from its seeded RNG (so trials differ, while signs, zeros and scales stay those of real activations).
- The *prompt* version is what the model (or the builtin writer) is shown: the same ``Model`` with
  ordinary random initialisation and random inputs of the captured shapes, plus a comment saying what
  the captured inputs look like. It is short, so it costs few tokens, and it runs on the meta device.

Both declare the modules and tensors under their paths in the full model (``features.0``), so a
kernel written for the unit names its parameters as the composed model does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from submitters.mkevolve.graph import SubSpec
from submitters.mkevolve.modules import constructor_source, tensor_source

NOISE = 0.01


def judge_source(spec: SubSpec, title: str, capture: Path) -> str:
    body = [
        f'"""MKEvolve sub-problem: {title}.\n\nInputs: the activations this unit received in a run of the full '
        f'model, times (1 + {NOISE} * randn) per trial.\nWeights: the full model\'s."""',
        _imports(spec),
        f"_CAPTURED = torch.load({str(capture)!r}, map_location=\"cpu\", weights_only=True)\nNOISE = {NOISE}",
        _model(spec, fill="empty", load=True),
        # The capture is kept on the CPU; each trial's copy is made on the judge's device (the
        # harness calls get_inputs under `with torch.device(...)`) and perturbed there, in place:
        # perturbing a full-size activation on the CPU took minutes per proposal on the H200 box
        # (L1/23's 6.4 GB input).
        "def get_inputs():\n    device = torch.get_default_device()\n"
        "    return [_perturbed(t.to(device=device, copy=True)) for t in _CAPTURED[\"inputs\"]]",
        "def _perturbed(t):\n    if t.is_floating_point():\n"
        "        t.mul_(torch.randn_like(t).mul_(NOISE).add_(1))\n    return t",
        "def get_init_inputs():\n    return []",
    ]
    return "\n\n\n".join(body) + "\n"


def prompt_source(spec: SubSpec, title: str, inputs: list) -> str:
    notes = "\n".join(f"    # {name}: {_describe(value)}" for name, value in zip(spec.inputs, inputs))
    makers = ", ".join(_maker(value) for value in inputs)
    body = [
        f'"""{title}: one submodule of a larger model. Its inputs are activations of that model; get_inputs makes '
        'random ones of the same shapes."""',
        _imports(spec),
        _model(spec, fill="randn", load=False),
        f"def get_inputs():\n    # what the full model feeds this submodule:\n{notes}\n    return [{makers}]",
        "def get_init_inputs():\n    return []",
    ]
    return "\n\n\n".join(body) + "\n"


def _imports(spec: SubSpec) -> str:
    lines = ["import torch", "import torch.nn as nn"] + [line for line in spec.imports if line != "import torch"]
    return "\n".join(dict.fromkeys(lines))


def _model(spec: SubSpec, fill: str, load: bool) -> str:
    lines = ["class Model(nn.Module):", "    def __init__(self):", "        super().__init__()"]
    lines += ["        " + line for line in declarations(spec, fill)]
    if load:
        lines.append("        self.load_state_dict(_CAPTURED[\"state\"])  # the full model's weights")
    lines.append("")
    lines += ["    " + line if line.strip() else "" for line in spec.forward.rstrip().splitlines()]
    return "\n".join(lines)


def declarations(spec: SubSpec, fill: str) -> list[str]:
    """Statements (relative to ``self``) declaring the spec's modules and tensors at their paths."""
    import torch.nn as nn

    lines, made, holders = [], set(), spec.containers
    for path in sorted(set(spec.modules) | set(spec.tensors), key=_natural):
        lines += _containers(path, made, holders)
        parent, _, name = path.rpartition(".")
        if path in spec.modules:
            lines.append(_assign(parent, name, constructor_source(spec.modules[path]), holders))
        elif isinstance(spec.tensors[path], nn.Parameter):
            value = f"nn.Parameter({tensor_source(spec.tensors[path], fill)})"
            lines.append(_assign(parent, name, value, holders, parameter=True))
        else:
            holder = expression(parent, holders)
            lines.append(f"{holder}.register_buffer({name!r}, {tensor_source(spec.tensors[path], fill)})")
    return lines


def _natural(path: str) -> list[tuple]:
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in path.split(".")]


def _containers(path: str, made: set, holders: dict[str, int]) -> list[str]:
    """Holders for the parents of ``path`` not made yet: an ``nn.Sequential`` of ``nn.Identity``
    placeholders where the model's holder is indexed, so positions and names match the model's."""
    parts, lines = path.split(".")[:-1], []
    for depth in range(1, len(parts) + 1):
        prefix = ".".join(parts[:depth])
        if prefix not in made:
            made.add(prefix)
            length = holders.get(prefix, 0)
            value = f"nn.Sequential({', '.join(['nn.Identity()'] * length)})" if length else "nn.Module()"
            lines.append(_assign(".".join(parts[:depth - 1]), parts[depth - 1], value, holders))
    return lines


def _assign(parent: str, name: str, value: str, holders: dict[str, int], parameter: bool = False) -> str:
    holder = expression(parent, holders)
    if name.isidentifier():
        return f"{holder}.{name} = {value}"
    if name.isdigit() and holders.get(parent):
        return f"{holder}[{name}] = {value}"
    return f"{holder}.{'register_parameter' if parameter else 'add_module'}({name!r}, {value})"


def expression(path: str, holders: dict[str, int]) -> str:
    """``self.features`` / ``self.features[0]`` for a dotted path (an index where the holder is a Sequential)."""
    text, walked = "self", []
    for part in filter(None, path.split(".")):
        if part.isidentifier():
            text = f"{text}.{part}"
        elif part.isdigit() and holders.get(".".join(walked)):
            text = f"{text}[{part}]"
        else:
            text = f"getattr({text}, {part!r})"
        walked.append(part)
    return text


def _describe(value: Any) -> str:
    import torch

    if not isinstance(value, torch.Tensor):
        return repr(value)
    text = f"{str(value.dtype).replace('torch.', '')} {tuple(value.shape)}"
    if value.numel() and (value.is_floating_point() or value.dtype in (torch.int32, torch.int64)):
        low, high = value.min().item(), value.max().item()
        text += f", values in [{low:.3g}, {high:.3g}]"
    return text


def _maker(value: Any) -> str:
    import torch

    shape = ", ".join(str(size) for size in value.shape) or "()"
    if value.dtype == torch.bool:
        return f"torch.rand({shape}) < 0.5"
    if not value.is_floating_point():
        low, high = (int(value.min()), int(value.max())) if value.numel() else (0, 0)
        return f"torch.randint({low}, {high + 1}, ({shape}{',' if value.dim() == 1 else ''}), dtype={value.dtype})"
    return f"torch.randn({shape})" if value.dtype == torch.float32 else f"torch.randn({shape}, dtype={value.dtype})"
