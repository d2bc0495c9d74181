"""Small problems and test doubles for the mkevolve tests."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.candidate import Budget, Candidate, GenerationContext
from harness.judge.evaluate import EvalOptions
from harness.llm.base import ChatConfig, Reply
from harness.problems.problem import problem_from_source
from harness.records.usage import Usage

HEADER = "import torch\nimport torch.nn as nn\n\n"

CONV_RELU_BIAS = HEADER + '''batch_size = 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        return x + self.bias


def get_inputs():
    return [torch.randn(batch_size, 3, 8, 8)]


def get_init_inputs():
    return [3, 4]
'''

MATMUL_SOFTMAX = HEADER + '''class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(16, 8))

    def forward(self, x):
        scores = x @ self.weight
        return torch.softmax(scores, dim=-1) * 2.0


def get_inputs():
    return [torch.randn(4, 16)]


def get_init_inputs():
    return []
'''

MLP = HEADER + '''class Model(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.network = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                     nn.Linear(width, 8))

    def forward(self, x):
        return self.network(x)


def get_inputs():
    return [torch.randn(4, 32)]


def get_init_inputs():
    return [32]
'''

# Data-dependent control flow: torch.fx cannot trace it, the child modules are still called once each.
UNTRACEABLE = HEADER + '''class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(8, 8)
        self.second = nn.Linear(8, 4)

    def forward(self, x):
        h = self.first(x)
        if h.sum() > 1e9:
            h = h * 0
        return self.second(torch.tanh(h))


def get_inputs():
    return [torch.randn(3, 8)]


def get_init_inputs():
    return []
'''

# Three light operations after an anchor: one unit that can be split, or merged with the anchor.
CHAIN = HEADER + '''class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        y = torch.relu(y)
        y = y * 3.0
        return torch.tanh(y)


def get_inputs():
    return [torch.randn(64, 8)]


def get_init_inputs():
    return []
'''


def problem(source: str, name: str = "L2/9_Toy"):
    return problem_from_source(source, name, level=int(name[1]), suite="kernelbench")


# -- a scripted provider and a scripted judge ------------------------------------------------------

@dataclass
class ScriptedProvider:
    """Writes a placeholder ModelNew for every prompt, carrying markers the scripted judge reads:
    ``refuse`` names ops it writes no code for, ``fail`` ops it writes wrongly, ``times`` the
    milliseconds (by the unit's op list, default 2.0) its kernels take."""

    refuse: tuple = ()
    fail: tuple = ()
    times: dict = field(default_factory=dict)
    speedups: dict = field(default_factory=dict)   # ops -> the speedup the judge reports (None: not given)
    tokens: int = 100
    name: str = "scripted"
    prompts: list = field(default_factory=list)

    def chat(self, messages: list[dict], config: ChatConfig = ChatConfig()) -> Reply:
        task = messages[1]["content"]
        self.prompts.append(messages)
        found = re.search(r'"""A submodule \(([^)]*)\)', task)
        ops = found.group(1) if found else "whole model"
        usage = Usage(input_tokens=self.tokens, output_tokens=self.tokens // 2, calls=1)
        if any(op in ops for op in self.refuse):
            return Reply("I cannot write that.", usage, self.name, "scripted-1")
        verdict = "incorrect" if any(op in ops for op in self.fail) else "ok"
        code = (f"import torch\nimport torch.nn as nn\n\n# verdict: {verdict}\n# ms: {self.times.get(ops, 2.0)}\n"
                f"# speedup: {self.speedups.get(ops, 'none')}\n"
                f"OPS = 'ops: {ops}'\n\n\nclass ModelNew(nn.Module):\n    def forward(self, *args):\n        return args[0]\n")
        return Reply(f"```python\n{code}```", usage, self.name, "scripted-1")


class ScriptedJudge:
    """Reads the ``# verdict:`` and ``# ms:`` markers instead of running anything."""

    def __init__(self):
        self.calls = []

    def __call__(self, subproblem, source: str) -> dict:
        self.calls.append(source)
        verdict = re.search(r"# verdict: (\w+)", source).group(1)
        ms = float(re.search(r"# ms: ([\d.]+)", source).group(1))
        return {"status": verdict, "correct": verdict == "ok", "reason": "" if verdict == "ok" else "trial 0: mismatch",
                "flags": [], "candidate_ms": ms if verdict == "ok" else None, "speedup": _speedup(source, verdict)}


def _speedup(source: str, verdict: str) -> float | None:
    found = re.search(r"# speedup: ([\d.]+)", source)
    return float(found.group(1)) if found and verdict == "ok" else None


def context(budget: Budget | None = None, evaluate=None, **fields) -> GenerationContext:
    checked = []

    def accept_all(source: str, timing: bool = False, profile: bool = False) -> dict:
        return {"status": "ok", "correct": True, "reason": "", "flags": []}

    def judged(source: str, timing: bool = False, profile: bool = False) -> dict:
        checked.append(source)
        return (evaluate or accept_all)(source)

    ctx = GenerationContext(options=EvalOptions(timing=False), evaluate=judged,
                            device_facts={"device": "cpu", "name": "CPU"}, budget=budget or Budget(),
                            log=lambda line: None, **fields)
    ctx.checked = checked
    return ctx


def run(source: str, provider, ctx: GenerationContext | None = None, **options) -> tuple[Candidate, GenerationContext]:
    from submitters.mkevolve import MKEvolve

    generator = MKEvolve(**options)
    generator._provider = provider
    ctx = ctx or context()
    return generator.generate(problem(source), ctx, verify=ScriptedJudge())[0], ctx

# minGPT-style attention: k and v are views of one projection, and k is read again after q @ k^T
ATTENTION = HEADER + '''import math


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(16, 48)
        self.n_head = 2

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(16, dim=2)
        k = k.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        q = q.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        v = v.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = torch.softmax(att, dim=-1)
        y = att @ v
        return y.transpose(1, 2).contiguous().view(b, t, c)


def get_inputs():
    return [torch.randn(2, 4, 16)]


def get_init_inputs():
    return []
'''
