"""A small deterministic stand-in for the harness judge, for generator tests on the CPU.

It executes the candidate in-process (test code only: candidates here are the tests' own), builds
``Model`` and ``ModelNew`` after the same seed, copies weights by name, runs both on one input
and compares. Timing is scripted: a candidate declares its speed with a ``# fake_ms: 2.5`` line,
so optimisation tests are deterministic.
"""

from __future__ import annotations

import re
import types

import torch

PROBLEM = '''import torch
import torch.nn as nn

batch_size = 4
dim = 16


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.relu(x) * self.scale


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [2.0]

# Crucible metadata, ignored by upstream tools:
SMALL = {"batch_size": 2, "dim": 8}
'''


def candidate(body: str = "torch.relu(x) * self.scale", fake_ms: float = 1.0) -> str:
    return f'''import torch
import torch.nn as nn

# fake_ms: {fake_ms}


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return {body}
'''


CORRECT = candidate()
WRONG = candidate("x * self.scale")
BROKEN = candidate("torch.relu(x) * self.scale )")
FAST = candidate(fake_ms=0.25)
SLOW = candidate(fake_ms=4.0)


class FakeJudge:
    def __init__(self, problem_source: str = PROBLEM, eager_ms: float = 2.0):
        self.problem_source = problem_source
        self.eager_ms = eager_ms
        self.calls: list[dict] = []

    def evaluate(self, source: str, timing: bool = False, profile: bool = False) -> dict:
        self.calls.append({"source": source, "timing": timing, "profile": profile})
        record = self._judge(source)
        if timing and record["status"] == "ok":
            self._time(source, record, profile)
        return record

    def _judge(self, source: str) -> dict:
        reference = _module(self.problem_source, "fake_problem")
        try:
            compiled = compile(source, "candidate.py", "exec")
        except SyntaxError as error:
            return _record("compile_error", f"SyntaxError: {error.msg} (candidate.py, line {error.lineno})")
        try:
            module = types.ModuleType("fake_candidate")
            exec(compiled, module.__dict__)
            torch.manual_seed(0)
            model = reference.Model(*reference.get_init_inputs())
            torch.manual_seed(0)
            new = module.ModelNew(*reference.get_init_inputs())
            new.load_state_dict(model.state_dict(), strict=False)
            torch.manual_seed(1)
            inputs = reference.get_inputs()
            expected, received = model(*inputs), new(*inputs)
        except Exception as error:  # the candidate's failure is a verdict
            return _record("runtime_error", f"{type(error).__name__}: {error}")
        return _compare(expected, received)

    def _time(self, source: str, record: dict, profile: bool) -> None:
        match = re.search(r"# fake_ms: ([0-9.]+)", source)
        milliseconds = float(match.group(1)) if match else 1.0
        record.update(candidate_ms=milliseconds, eager_ms=self.eager_ms, speedup=self.eager_ms / milliseconds,
                      flops=2_000_000, bytes=4_000_000, sol_fraction=0.004 / milliseconds)
        if profile:
            record["profile"] = [{"name": "fake_relu_kernel", "time_us": milliseconds * 1000, "calls": 1}]


def _module(source: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    return module


def _record(status: str, reason: str = "", **fields) -> dict:
    return {"status": status, "correct": status == "ok", "reason": reason, "checks": {}, "candidate_ms": None,
            "eager_ms": None, "speedup": None, "sol_fraction": None, "flops": None, "bytes": None, "flags": [],
            **fields}


def _compare(expected: torch.Tensor, received) -> dict:
    if not isinstance(received, torch.Tensor) or received.shape != expected.shape:
        return _record("incorrect", f"output shape {getattr(received, 'shape', None)}, expected {tuple(expected.shape)}")
    bad = ~torch.isclose(received, expected, atol=1e-5, rtol=1e-5)
    count = int(bad.sum())
    if not count:
        return _record("ok")
    first = [tuple(index.tolist()) for index in bad.nonzero()[:3]]
    lines = [f"{count} of {expected.numel()} elements differ"] + [
        f"at {index}: expected {float(expected[index]):.4g}, got {float(received[index]):.4g}" for index in first
    ]
    return _record("incorrect", f"{count} of {expected.numel()} elements differ beyond atol=1e-05, rtol=1e-05",
                   checks={"mismatch": "\n".join(lines)})
