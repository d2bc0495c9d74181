"""``reference``: the problem's own Model as the candidate. The harness's sanity check: it must be
correct, and its speedup over eager must be about 1."""

from __future__ import annotations

from harness.candidate import Candidate
from harness.registry import register


@register("generator", "reference")
class ReferenceGenerator:
    trusted_baseline = True  # harness code, not a candidate: exempt from the no_custom_kernel flag

    def __init__(self, **options):
        self.options = options

    def generate(self, problem, ctx) -> list[Candidate]:
        source = problem.source + "\n\nModelNew = Model\n"
        return [Candidate(source, label="reference", provider=None, model=None,
                          provenance={"kind": "reference"})]
