"""``inductor``: torch.compile of the reference as the candidate, a strong non-LLM baseline."""

from __future__ import annotations

from harness.candidate import Candidate
from harness.registry import register


@register("generator", "inductor")
class InductorGenerator:
    trusted_baseline = True

    def __init__(self, mode: str | None = None, **options):
        self.mode = mode  # torch.compile mode, e.g. "max-autotune"; None is the default mode

    def generate(self, problem, ctx) -> list[Candidate]:
        mode = f", mode={self.mode!r}" if self.mode else ""
        source = problem.source + (
            "\n\nclass ModelNew(Model):\n"
            "    def __init__(self, *args, **kwargs):\n"
            "        super().__init__(*args, **kwargs)\n"
            f"        self._compiled_forward = torch.compile(Model.forward.__get__(self){mode})\n\n"
            "    def forward(self, *args):\n"
            "        return self._compiled_forward(*args)\n"
        )
        return [Candidate(source, label="inductor", provenance={"kind": "torch.compile", "mode": self.mode or "default"})]
