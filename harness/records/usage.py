"""Token usage and cost as a value type that adds up: per call, per problem, per run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class Usage:
    """What one or more LLM calls consumed. ``estimated`` is true when any part was counted locally
    with a tokenizer because the endpoint reported nothing."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    estimated: bool = False

    def __add__(self, other: "Usage") -> "Usage":
        if not isinstance(other, Usage):
            return NotImplemented
        numbers = {
            f.name: getattr(self, f.name) + getattr(other, f.name)
            for f in fields(self)
            if f.name != "estimated"
        }
        return Usage(**numbers, estimated=self.estimated or other.estimated)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> "Usage":
        if not data:
            return cls()
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def total(usages) -> Usage:
    """The sum of an iterable of Usage values (Usage() when empty)."""
    result = Usage()
    for usage in usages:
        result = result + usage
    return result
