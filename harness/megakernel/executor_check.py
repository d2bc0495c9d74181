"""Executor agreement: decode with the megakernel and compare every step with eager PyTorch and the VM.

``decode(model, sched, ...)`` feeds a prompt token by token, then greedy tokens (eager's argmax), as
``vmcheck.check`` does; at every position the megakernel's logits must be within tolerance of eager's
full-sequence forward and of the reference VM running the same schedule, and its argmax (computed
on the device by the schedule's SAMPLE_ARGMAX task) must equal eager's.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field

from harness.megakernel.configs import ModelConfig, ScheduleConfig
from harness.megakernel.lowering import lower

ATOL = RTOL = 1e-4   # fp32, as the VM's check: reduction order differs, nothing else may


@dataclass
class Decode:
    model: str
    schedule: str
    device: str
    steps: int = 0
    max_err_eager: float = 0.0
    max_err_vm: float = 0.0
    logits_ok: bool = True
    tokens_equal: bool = True
    deadlocks: int = 0
    tokens: list[int] = field(default_factory=list)
    device_tokens: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.logits_ok and self.tokens_equal and not self.deadlocks

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def decode(model: ModelConfig, sched: ScheduleConfig, steps: int = 8, prompt: tuple[int, ...] = (1, 5, 2),
           seed: int = 0, device: str = "cuda", place=None, spin_bound: int | None = None,
           with_vm: bool = True) -> Decode:
    """``place(doc) -> doc`` may re-place tasks first (the interpreter tests use it)."""
    import torch

    from harness.megakernel.executor import Megakernel
    from harness.megakernel.llama_ref import EagerLlama, init_weights
    from harness.megakernel.vm import ReferenceVM

    weights = init_weights(model, seed)
    eager, vm, rng = EagerLlama(model, weights), ReferenceVM(weights), random.Random(seed)
    mk = Megakernel({k: v.to(device) for k, v in weights.items()}, device,
                    **({"spin_bound": spin_bound} if spin_bound else {}))
    result = Decode(model.name(), sched.name(), device)
    tokens = [prompt[0] % model.vocab]
    for pos in range(steps):
        doc = lower(model, sched, pos)
        doc = place(doc) if place else doc
        launch = mk.prepare(doc).step({"token": tokens[pos]})
        expected = eager(torch.tensor(tokens))[-1]
        if not launch.ok:
            result.deadlocks += 1
            result.logits_ok = result.tokens_equal = False
            break
        got = launch.logits()
        result.max_err_eager = max(result.max_err_eager, float((got - expected).abs().max()))
        result.logits_ok &= bool(torch.allclose(got, expected, atol=ATOL, rtol=RTOL))
        if with_vm:
            reference = vm.run(doc, tokens[pos], rng).logits
            result.max_err_vm = max(result.max_err_vm, float((got - reference).abs().max()))
            result.logits_ok &= bool(torch.allclose(got, reference, atol=ATOL, rtol=RTOL))
        result.tokens_equal &= launch.next_token() == int(expected.argmax())
        result.device_tokens.append(launch.next_token())
        tokens.append(prompt[pos + 1] % model.vocab if pos + 1 < len(prompt) else int(expected.argmax()))
        result.steps += 1
    result.tokens = tokens
    return result


def in_program_order(doc: dict, programs: int) -> dict:
    """The same schedule with its task list cut into ``programs`` contiguous runs, run ``p`` on SM
    ``p``. A lowering's task list is topological, so no program then waits on a later one: the only
    multi-program placement Triton's interpreter (programs one after another) can complete."""
    doc = {**doc, "tasks": [dict(t) for t in doc["tasks"]],
           "target": {**doc["target"], "num_sms": max(programs, doc["target"]["num_sms"]),
                      "max_resident": max(programs, doc["target"].get("max_resident") or 0)}}
    n = len(doc["tasks"])
    for index, task in enumerate(doc["tasks"]):
        task["sm"] = index * programs // n
    onchip = {b["id"] for b in doc["buffers"] if b["space"] in ("SMEM", "REGISTER")}
    if onchip:   # on-chip placement was decided for the old SMs; keep such buffers in global scratch
        doc["buffers"] = [{**b, "space": "GLOBAL_SCRATCH"} if b["id"] in onchip else b for b in doc["buffers"]]
        if doc.get("pages"):
            doc["pages"] = {**doc["pages"], "pages": [{**p, "space": "GLOBAL_SCRATCH"} for p in doc["pages"]["pages"]]}
    return doc


def device_weights(model: ModelConfig, seed: int = 0, device: str = "cuda") -> dict:
    """Random weights made on the device, named and scaled as ``llama_ref.init_weights`` makes them."""
    from harness.megakernel.llama_ref import init_weights

    return init_weights(model, seed, device)


def decode_against_eager(model: ModelConfig, sched: ScheduleConfig, weights: dict, steps: int = 6,
                         prompt: tuple[int, ...] = (1, 5, 2), device: str = "cuda", atol: float = 1e-3,
                         rtol: float = 1e-3, mk=None) -> dict:
    """Greedy decode with the megakernel against ``EagerDecode`` (same weights, same device), for
    models too large for the VM and the full-sequence reference. Returns the agreement as a dict."""
    import torch

    from harness.megakernel.executor import Megakernel
    from harness.megakernel.executor_eager import EagerDecode

    mk = mk or Megakernel(weights, device)
    mk.reset_caches()
    eager = EagerDecode(model, weights, device)
    tokens, errors, equal, deadlocks = [prompt[0] % model.vocab], [], True, 0
    close = True
    for pos in range(steps):
        launch = mk.prepare(lower(model, sched, pos)).step({"token": tokens[pos]})
        expected = eager.step(torch.tensor([tokens[pos]], device=device), pos).cpu()
        if not launch.ok:
            deadlocks += 1
            break
        errors.append(float((launch.logits() - expected).abs().max()))
        close &= bool(torch.allclose(launch.logits(), expected, atol=atol, rtol=rtol))
        equal &= launch.next_token() == int(expected.argmax())
        tokens.append(prompt[pos + 1] % model.vocab if pos + 1 < len(prompt) else int(expected.argmax()))
    return {"steps": len(errors), "max_abs_err": max(errors, default=None), "logits_ok": close,
            "tokens_equal": equal, "deadlocks": deadlocks, "tokens": tokens, "atol": atol, "rtol": rtol,
            "ok": close and equal and not deadlocks and len(errors) == steps}
