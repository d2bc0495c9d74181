"""One run of the full model, to learn what each unit actually receives.

The model is built exactly as the judge builds it (``ReferenceEnv``: the problem's constructor under
a seed, the run's device and precision) and fed the problem's own inputs. Each unit's inputs are
copied at the moment the unit starts (after any earlier in-place operation), together with the
weights it uses, and saved to a file its sub-problem loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from submitters.mkevolve.graph import SubSpec, ValueInfo
from submitters.mkevolve.units import Undecomposable

CAPTURE_SEED = 20_26
CAPTURE_SECRET = 0


class ModelRun:
    """The reference model and one set of its inputs, as the judge would make them."""

    def __init__(self, problem: Any, opts: Any):
        from harness.judge.reference import ReferenceEnv

        self.env = ReferenceEnv(problem, opts.device, opts.precision, CAPTURE_SECRET, opts.allow_tf32)
        self.model = self.env.model
        self.inputs = self.env.make_inputs(self.env.trial_seed(CAPTURE_SEED))
        self.tolerance = opts.tol()
        self.faithful = False   # the traced graph reproduced the model's output once (checked on the first run)

    def reference_output(self) -> list:
        import torch

        from harness.judge.checks import flatten_outputs

        with torch.no_grad():
            return flatten_outputs(self.model(*snapshot(self.inputs))) or []

    def run_graph(self, gm: Any, wanted: dict | None = None) -> tuple[dict[str, ValueInfo], dict[str, list]]:
        """Interpret the traced graph on the inputs: every value's kind and size, and for each
        (key, nodes) listed under a node in ``wanted``, copies of those nodes' values just before it runs."""
        import torch
        import torch.fx as fx

        wanted = wanted or {}
        info: dict[str, ValueInfo] = {}
        captured: dict[str, list] = {}

        class Recorder(fx.Interpreter):
            def run_node(self, node):
                for key, sources in wanted.get(node, ()):
                    captured[key] = [snapshot_value(self.env[source]) for source in sources]
                result = super().run_node(node)
                info[node.name] = value_info(result)
                return result

        with torch.no_grad():
            output = Recorder(gm).run(*snapshot(self.inputs))
        if not self.faithful:
            self._check_same(output)
            self.faithful = True
        return info, captured

    def run_hooked(self, paths: list[str]) -> tuple[dict[str, list], dict[str, set]]:
        """Run the model with hooks on the child modules at ``paths``: the arguments of each one's
        first call, and the distinct argument signatures (types, shapes, dtypes) of all its calls."""
        import torch

        captured: dict[str, list] = {}
        calls: dict[str, set] = {path: set() for path in paths}
        handles = [self.model.get_submodule(path).register_forward_pre_hook(_recorder(path, captured, calls))
                   for path in paths]
        try:
            with torch.no_grad():
                self.model(*snapshot(self.inputs))
        finally:
            for handle in handles:
                handle.remove()
        return captured, calls

    def _check_same(self, output: Any) -> None:
        import torch

        from harness.judge.checks import flatten_outputs

        traced, direct = flatten_outputs(output), self.reference_output()
        same = traced is not None and len(traced) == len(direct) and all(
            a.shape == b.shape and torch.allclose(a.double(), b.double(), rtol=self.tolerance, atol=self.tolerance,
                                                  equal_nan=True) for a, b in zip(traced, direct))
        if not same:
            raise Undecomposable("the traced graph does not reproduce the model's output (randomness or "
                                 "control flow that tracing cannot follow)")


def _recorder(path: str, captured: dict, calls: dict):
    def hook(module, args):
        calls[path].add(tuple((type(a).__name__, tuple(getattr(a, "shape", ())), str(getattr(a, "dtype", "")))
                              for a in args))
        if path not in captured:
            captured[path] = [snapshot_value(arg) for arg in args]

    return hook


def value_info(value: Any) -> ValueInfo:
    import torch

    if isinstance(value, torch.Tensor):
        return ValueInfo(True, value.numel() * value.element_size())
    if isinstance(value, (tuple, list)):
        parts = [value_info(item) for item in value]
        return ValueInfo(False, sum(p.nbytes for p in parts), any(p.tensor or p.holds_tensors for p in parts))
    return ValueInfo(False, 0)


def snapshot_value(value: Any) -> Any:
    import torch

    return value.detach().clone() if isinstance(value, torch.Tensor) else value


def snapshot(values: list) -> list:
    return [snapshot_value(value) for value in values]


def sub_state(spec: SubSpec) -> dict:
    """The weights a sub-problem declares, under the names it declares them with (the model's)."""
    state = {}
    for path, module in spec.modules.items():
        state.update({f"{path}.{key}": value.detach().clone() for key, value in module.state_dict().items()})
    state.update({path: tensor.detach().clone() for path, tensor in spec.tensors.items()})
    return state


def save(folder: Path, name: str, inputs: list, state: dict) -> Path:
    """Write a unit's captured inputs and weights (on the CPU) for its sub-problem to load."""
    import torch

    for value in inputs:
        if not isinstance(value, torch.Tensor):
            raise Undecomposable(f"unit {name} receives a {type(value).__name__}, not a tensor")
    path = folder / f"{name}.pt"
    torch.save({"inputs": [t.cpu() for t in inputs], "state": {k: v.cpu() for k, v in state.items()}}, path)
    return path
