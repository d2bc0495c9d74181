"""VM agreement: run lowerings on the reference VM for several decode steps and compare with eager."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from harness.megakernel.configs import ModelConfig, ScheduleConfig
from harness.megakernel.lowering import lower

ATOL = RTOL = 1e-4  # fp32: reduction-order differences only


@dataclass
class Agreement:
    model: str
    schedule: str
    steps: int = 0
    max_abs_err: float = 0.0
    logits_ok: bool = True
    tokens_equal: bool = True
    tokens: list[int] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.logits_ok and self.tokens_equal


def check(model: ModelConfig, sched: ScheduleConfig, steps: int = 4, prompt: tuple[int, ...] = (1, 2),
          seed: int = 0) -> Agreement:
    """Decode ``steps`` positions: the prompt is fed token by token, then greedy tokens; at every
    position the VM's logits must match eager within fp32 tolerance and its argmax must equal eager's."""
    import torch

    from harness.megakernel.llama_ref import EagerLlama, init_weights
    from harness.megakernel.vm import ReferenceVM

    weights = init_weights(model, seed)
    ref, vm, rng = EagerLlama(model, weights), ReferenceVM(weights), random.Random(seed)
    result = Agreement(model.name(), sched.name())
    tokens = [p % model.vocab for p in prompt[:1]]
    for pos in range(steps):
        step = vm.run(lower(model, sched, pos), tokens[pos], rng)
        expected = ref(torch.tensor(tokens))[-1]
        err = float((step.logits - expected).abs().max())
        result.max_abs_err = max(result.max_abs_err, err)
        result.logits_ok &= bool(torch.allclose(step.logits, expected, atol=ATOL, rtol=RTOL))
        result.tokens_equal &= step.next_token == int(expected.argmax())
        result.positions.append(pos)
        forced = pos + 1 < len(prompt)
        tokens.append(prompt[pos + 1] % model.vocab if forced else int(expected.argmax()))
    result.steps, result.tokens = steps, tokens
    return result
