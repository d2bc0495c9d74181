"""Shrinking a problem file that declares no small size (an upstream KernelBench file, say).

The size constants are halved one at a time, the largest first, and after each step the reference
is built and run on PyTorch's meta device (shapes only: nothing is allocated or computed), so a
step that breaks the model's shapes (a LayerNorm's normalized shape written as a literal, a
reshape to a fixed size) is taken back and that constant is left as it is. Only constants bound to
literals are changed; the ones derived from them (``input_shape = (dim,)``) follow. The result is
run once for real, on the CPU, before it is used.
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable

from harness.problems import sizes
from harness.errors import UserError

MAX_ELEMENTS = 1 << 21  # inputs and outputs together
FLOOR = 4               # a constant is never halved below this
Loader = Callable[[str, str], Any]  # (source, module name) -> module, harness.problems.problem.load_module


def shrink_to_small(source: str, where: str, load: Loader, max_elements: int = MAX_ELEMENTS) -> tuple[dict, str]:
    """(the constants changed, the source at the small size); a UserError with the fix otherwise."""
    shrink = _Shrink(source, where, load)
    elements = shrink.elements(shrink.overrides)
    while elements > max_elements:
        name = _largest(shrink.roots, shrink.overrides, shrink.frozen)
        if name is None:
            _fail(where, f"still {elements:,} elements with {shrink.overrides or 'no constant changed'}")
        elements = shrink.halve(name, elements)
    small = sizes.apply_overrides(source, shrink.overrides, where)
    _run_for_real(small, where, load, shrink.overrides)
    return shrink.overrides, small


class _Shrink:
    def __init__(self, source: str, where: str, load: Loader):
        self.source, self.where, self.load = source, where, load
        self.roots = sizes.literal_size_constants(source)
        self.overrides: dict[str, Any] = {}
        self.frozen: set[str] = set()
        self.with_forward = _forward_runs_on_meta(source, load)

    def elements(self, overrides: dict[str, Any]) -> int:
        return _elements(sizes.apply_overrides(self.source, overrides, self.where), self.load, self.with_forward)

    def halve(self, name: str, elements: int) -> int:
        """Halve ``name``, alone or, where the model ties it to another constant (2 * W ==
        out_channels), together with that one; the new element count. A constant that no such step
        keeps consistent is left as it is."""
        for partner in [None] + [other for other in self.roots if other not in (name, *self.frozen)]:
            trial = self._halved(name, partner)
            if trial is None:
                continue
            try:
                elements = self.elements(trial)
            except UserError:
                raise
            except Exception:  # noqa: BLE001 - this step broke the model's shapes: try the next
                continue
            self.overrides = trial
            return elements
        self.frozen.add(name)
        return elements

    def _halved(self, name: str, partner: str | None) -> dict[str, Any] | None:
        trial = dict(self.overrides)
        for each in filter(None, (name, partner)):
            trial[each] = _halve(self.overrides.get(each, self.roots[each]))
        if partner is not None and trial[partner] == self.overrides.get(partner, self.roots[partner]):
            return None  # the partner is at its floor already
        return trial


def _fail(where: str, why: str):
    raise UserError(f"{where}: cannot shrink to a small size automatically ({why}). Declare the small size in "
                    f"the file: SMALL = {{'<constant>': <value>, ...}} overriding its module-level size constants.")


def _largest(roots: dict[str, Any], overrides: dict[str, Any], frozen: set[str]) -> str | None:
    def size(name: str) -> int:
        value = overrides.get(name, roots[name])
        return max(value) if isinstance(value, tuple) else value

    open_names = [name for name in roots if name not in frozen and size(name) > FLOOR]
    return max(open_names, key=size, default=None)


def _halve(value):
    if isinstance(value, tuple):
        return tuple(max(FLOOR, v // 2) if v > FLOOR else v for v in value)
    return max(FLOOR, value // 2)


def _module(source: str, load: Loader):
    return load(source, f"crucible_shrink_{hashlib.sha256(source.encode()).hexdigest()[:16]}")


def _forward_runs_on_meta(source: str, load: Loader) -> bool:
    """Whether the model's forward runs on the meta device at all (some operators have no meta
    kernel); if not, only the inputs are counted and the final real run checks the shapes."""
    try:
        _elements(source, load, True)
    except UserError:
        raise
    except Exception:  # noqa: BLE001 - an operator without a meta kernel
        return False
    return True


def _elements(source: str, load: Loader, with_forward: bool) -> int:
    import torch

    module = _module(source, load)
    with torch.device("meta"), torch.no_grad():
        inputs = module.get_inputs()
        count = sum(t.numel() for t in inputs if isinstance(t, torch.Tensor))
        if not with_forward:
            return count
        output = module.Model(*module.get_init_inputs())(*inputs)
    outputs = output if isinstance(output, (tuple, list)) else [output]
    return count + sum(t.numel() for t in outputs if isinstance(t, torch.Tensor))


def _run_for_real(source: str, where: str, load: Loader, overrides: dict) -> None:
    import torch

    try:
        module = _module(source, load)
        with torch.no_grad():
            torch.manual_seed(0)
            module.Model(*module.get_init_inputs())(*module.get_inputs())
    except UserError:
        raise
    except Exception as error:  # noqa: BLE001 - said with the constants that were changed
        _fail(where, f"at {overrides} the reference fails: {type(error).__name__}: {error}")
