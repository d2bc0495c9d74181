"""The judge's trusted side of a problem: the reference model, fresh inputs, expected outputs.

Expected outputs are computed here, in the judge process, and never sent to a worker.
"""

from __future__ import annotations

import copy
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from harness.problems import seeds
from harness.judge.precision import apply_backend_flags, backend_flags, cast_value, torch_dtype
from harness.problems.problem import Problem

PUBLIC_INIT_SEED = 42
# The float64 re-check (``ReferenceEnv.exact``) runs the reference once more in float64 for each
# mismatching output it looks at. Above this many FLOPs (at the reference's own count) it is skipped:
# float64 convolutions run far below float32 peak, and on the CPU float64 is the slow path.
FLOAT64_RECHECK_MAX_FLOPS = {"cuda": 2e13, "cpu": 2e10}


@dataclass
class ReferenceEnv:
    problem: Problem
    device: str
    precision: str
    secret: int
    allow_tf32: bool = False
    flops: int | None = None
    conv_flops: int | None = None  # the convolutions' share of flops (sol.flag_floor_ms)
    nbytes: int | None = None
    init_args: list = field(default_factory=list)

    def __post_init__(self):
        import torch

        self.flags = backend_flags(self.precision, self.allow_tf32)
        apply_backend_flags(self.flags)
        self.dtype = torch_dtype(self.precision)
        self.module = self.problem.module()
        self.init_args = list(self.module.get_init_inputs())
        self.init_seed = seeds.mixed(PUBLIC_INIT_SEED, self.secret, "init")
        torch.manual_seed(self.init_seed)
        with torch.device(self.device):
            model = self.module.Model(*self.init_args)
        self.model = model.to(device=self.device, dtype=self.dtype)
        self._model64 = None  # the float64 copy the re-check builds on first need (see exact)

    def state_dict(self) -> dict:
        return {k: v.detach() for k, v in self.model.state_dict().items()}

    def make_inputs(self, seed: int) -> list:
        """Inputs from the problem's own get_inputs under ``seed``, floats cast, on the device."""
        import torch

        torch.manual_seed(seed)
        with torch.device(self.device):
            raw = self.module.get_inputs()
        return [cast_value(value, self.dtype, self.device) for value in raw]

    def expected(self, inputs: list) -> list:
        """The reference's outputs on pristine copies of the inputs, as a flat list of tensors."""
        import torch

        from harness.judge.checks import flatten_outputs

        pristine = clone_inputs(inputs)
        with torch.no_grad(), _worker_threads(self.device):
            if self.flops is None:
                self._measure_work(pristine)
                pristine = clone_inputs(inputs)
            output = self.model(*pristine)
        flat = flatten_outputs(output)
        if flat is None:
            raise TypeError(f"{self.problem.id}: the reference returned {type(output).__name__}, not tensors")
        # A copy only where an output shares memory with an input (a view of it): anything else is
        # already private, and a second copy of a full-size output costs as much GPU memory as it.
        shared = {t.untyped_storage().data_ptr() for t in pristine if isinstance(t, torch.Tensor)}
        return [t.detach().clone() if t.untyped_storage().data_ptr() in shared else t.detach() for t in flat]

    def exact(self, inputs: list) -> tuple[list | None, str]:
        """The reference's outputs in float64 from the same values (pristine ``inputs`` upcast), for
        re-judging a float mismatch (checks.within_reference_error); ``(None, why)`` where that is
        not possible: too costly, an op without float64, out of memory."""
        import torch

        from harness.judge.checks import flatten_outputs

        limit = FLOAT64_RECHECK_MAX_FLOPS.get(self.device.split(":")[0], 0.0)
        if self.flops and self.flops > limit:
            return None, f"skipped: {self.flops:.3g} FLOPs is above the {limit:.3g} the re-check allows on {self.device}"
        try:
            if self._model64 is None:
                self._model64 = copy.deepcopy(self.model).to(torch.float64)
            # floats become new float64 tensors; other tensors are cloned (the inputs stay pristine)
            upcast = [cast_value(v.clone() if isinstance(v, torch.Tensor) and not v.is_floating_point() else v,
                                 torch.float64, self.device) for v in inputs]
            with torch.no_grad(), _worker_threads(self.device):
                flat = flatten_outputs(self._model64(*upcast))
        except (RuntimeError, TypeError, NotImplementedError) as error:  # OutOfMemoryError is a RuntimeError
            self.drop_exact()
            return None, f"not possible: {type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}"
        if flat is None:
            return None, "not possible: the float64 reference returned no tensors"
        return [t.detach() for t in flat], ""

    def drop_exact(self) -> None:
        """Free the float64 copy of the model (it is as large again as the reference's weights, twice)."""
        self._model64 = None

    def _measure_work(self, inputs: list) -> None:
        from harness.judge import sol

        try:
            self.flops, self.conv_flops = sol.count_work(self.model, inputs)
        except Exception:
            self.flops = self.conv_flops = 0  # an op FlopCounterMode cannot follow; bandwidth still bounds the floor
        output = self.model(*clone_inputs(inputs))
        self.nbytes = sol.minimum_bytes(self.model, inputs, output)

    def trial_seed(self, trial: int) -> int:
        return seeds.mixed(42 + trial, self.secret, "trial")

    def timing_seed(self, number: int) -> int:
        return seeds.mixed(100_000 + number, self.secret, "timing")


def second_look(env: ReferenceEnv | None, pristine: list, expected: list, received: list, tol: float, first, tally: dict):
    """The check that stands for outputs that failed ``first`` (checks.compare_outputs): a miss made
    only of finite values beyond the tolerance is re-judged against the float64 result
    (checks.within_reference_error); anything else stands as it is. ``tally`` counts the outputs
    that passed this way and keeps the largest reference error allowed, for the record. Without an
    ``env`` (unit tests of the timing loop's other checks) there is no second look."""
    from harness.judge import checks

    if first.ok or first.kind != "values" or env is None:
        return first
    exact, why = env.exact(pristine)
    if exact is None:
        return replace(first, reason=f"{first.reason} (float64 re-check {why})")
    second = checks.within_reference_error(expected, exact, received, tol, tol)
    del exact
    if not second.ok:
        return replace(first, reason=f"{first.reason}; against the float64 result too: {second.reason}")
    tally["passed"] = tally.get("passed", 0) + 1
    tally["reference_error"] = max(tally.get("reference_error", 0.0), second.allowance)
    tally["max_abs_err"] = max(tally.get("max_abs_err", 0.0), second.max_abs_err)
    return second


@contextmanager
def _worker_threads(device: str):
    """On the CPU, run the reference with the worker's thread count (see worker_cpu_threads)."""
    import torch

    if device != "cpu":
        yield
        return
    from harness.judge.device import worker_cpu_threads

    previous = torch.get_num_threads()
    torch.set_num_threads(worker_cpu_threads())
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def clone_inputs(inputs: list) -> list:
    import torch

    return [v.clone() if isinstance(v, torch.Tensor) else v for v in inputs]


def inputs_equal(a: list, b: list) -> bool:
    """Bit-for-bit equality (so NaNs compare equal to themselves)."""
    import torch

    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype or not torch.equal(_bits(x), _bits(y)):
                return False
        elif x != y:
            return False
    return True


def _bits(t):
    import torch

    views = {8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.uint8}
    size = t.element_size()
    return t.contiguous().view(views[size]) if size in views and not t.is_complex() else t
