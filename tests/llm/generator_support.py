"""Shared pieces of the generator tests: a problem, a context around the fake judge, replies."""

from __future__ import annotations

from types import SimpleNamespace

from harness.candidate import Budget, GenerationContext
from tests.llm.fake_judge import PROBLEM, FakeJudge

FACTS = {"name": "NVIDIA H200", "device_kind": "cuda", "flops_per_s": {"fp32": 5.0e13}, "bytes_per_s": 4.0e12}


def problem() -> SimpleNamespace:
    return SimpleNamespace(id="L1/19_ReLU", name="ReLU", level=1, source=PROBLEM)


def context(provider, budget: Budget | None = None, judge: FakeJudge | None = None, **extra) -> GenerationContext:
    judge = judge or FakeJudge()
    ctx = GenerationContext(options=SimpleNamespace(precision="fp32"), evaluate=judge.evaluate, device_facts=FACTS,
                            llm=provider, budget=budget or Budget(), log=lambda line: None)
    ctx.judge = judge
    for name, value in extra.items():
        setattr(ctx, name, value)
    return ctx


def answer(source: str, note: str = "Here is the kernel.") -> str:
    return f"{note}\n\n```python\n{source}```\n"
