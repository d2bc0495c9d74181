"""Dollars from a versioned price table (``prices.json``: version, date, source, per-model prices).

Prices are US dollars per million tokens. OpenAI-style usage counts cached prompt tokens inside
the prompt total and reasoning tokens inside the completion total, so the bill is
uncached input x input price + cached input x cached price + output x output price.
``CRUCIBLE_PRICES`` may name a JSON file in the same format whose models extend or override ours
(a local endpoint's model, a negotiated rate).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from harness.errors import UserError
from harness.records.usage import Usage

DEFAULT_TABLE = Path(__file__).with_name("prices.json")
_SNAPSHOT = re.compile(r"^-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$")  # gpt-4o-2024-08-06, o1-20241217, gpt-4-0613


@dataclass(frozen=True)
class Price:
    input: float
    cached_input: float
    output: float

    def cost(self, usage: Usage) -> float:
        """Dollars for ``usage`` at this price (dollars per million tokens)."""
        cached = min(usage.cached_input_tokens, usage.input_tokens)
        uncached = usage.input_tokens - cached
        return (uncached * self.input + cached * self.cached_input + usage.output_tokens * self.output) / 1e6


@dataclass(frozen=True)
class PriceTable:
    version: str
    date: str
    source: str
    models: dict[str, Price]

    def lookup(self, model: str) -> Price | None:
        """The price of ``model``, of its base name without a provider prefix, or of the model a
        dated snapshot belongs to (``gpt-4o-2024-08-06`` is priced as ``gpt-4o``)."""
        for name in _candidate_names(model):
            if name in self.models:
                return self.models[name]
            base = _snapshot_base(name, self.models)
            if base is not None:
                return self.models[base]
        return None

    def cost(self, model: str, usage: Usage) -> float | None:
        """Dollars for ``usage`` on ``model``; None when the table has no price for it."""
        price = self.lookup(model)
        return None if price is None else price.cost(usage)


def _candidate_names(model: str) -> list[str]:
    name = model.strip().lower()
    names = [name]
    if "/" in name:  # "openai/gpt-4o" through a LiteLLM proxy
        names.append(name.rsplit("/", 1)[1])
    return names


def _snapshot_base(name: str, models: dict[str, Price]) -> str | None:
    matches = [key for key in models if name.startswith(key) and _SNAPSHOT.match(name[len(key):])]
    return max(matches, key=len) if matches else None


@lru_cache(maxsize=8)
def _read_table(path: str, override: str | None) -> PriceTable:
    data = _read_json(Path(path))
    models = dict(data.get("models", {}))
    version = str(data.get("version", "unknown"))
    if override:
        extra = _read_json(Path(override))
        models.update(extra.get("models", {}))
        version = f"{version}+{extra.get('version', Path(override).name)}"
    return PriceTable(
        version=version,
        date=str(data.get("date", "")),
        source=str(data.get("source", "")),
        models={name.lower(): _price(name, entry, path) for name, entry in models.items()},
    )


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except OSError as error:
        raise UserError(f"price table {path} cannot be read ({error.strerror}); check CRUCIBLE_PRICES") from None
    except json.JSONDecodeError as error:
        raise UserError(f"price table {path} is not valid JSON ({error.msg}, line {error.lineno})") from None


def _price(name: str, entry: dict, path: str) -> Price:
    try:
        return Price(float(entry["input"]), float(entry.get("cached_input", entry["input"])), float(entry["output"]))
    except (KeyError, TypeError, ValueError):
        raise UserError(
            f"price table {path}: model {name!r} needs numeric 'input' and 'output' "
            "(dollars per million tokens), and optionally 'cached_input'"
        ) from None


def parse_price(text: str, name: str = "--llm-price") -> Price:
    """``INPUT,OUTPUT[,CACHED_INPUT]`` in dollars per million tokens, for a model the table lacks."""
    parts = [part.strip() for part in str(text).split(",")]
    try:
        numbers = [float(part) for part in parts]
    except ValueError:
        numbers = []
    if len(numbers) not in (2, 3) or any(n < 0 for n in numbers):
        raise UserError(f"{name} {text!r} is not INPUT,OUTPUT[,CACHED_INPUT] in dollars per million tokens "
                        "(e.g. 0.20,0.60)")
    return Price(numbers[0], numbers[2] if len(numbers) == 3 else numbers[0], numbers[1])


def load_prices(path: str | os.PathLike | None = None) -> PriceTable:
    """The price table: ours (or ``path``), extended by the file ``CRUCIBLE_PRICES`` names."""
    return _read_table(str(path or DEFAULT_TABLE), os.environ.get("CRUCIBLE_PRICES") or None)
