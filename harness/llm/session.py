"""What an LLM generator needs around a provider: options, the provider to use, budgets, transcript.

``LLMSession`` meters every call for one problem: usage adds up, each step lands in the
transcript (for the leaderboard's drill-down), and before each call the per-problem budget
(``ctx.budget``) and, where the harness provides them, the run's budget and spending so far
(``ctx.run_budget``, ``ctx.run_usage``) are checked with the call's expected size reserved
(``budget.py``). A spent budget raises ``BudgetExceeded``, which generators turn into a clean
stop with a verdict.
Endpoint failures and retries are kept too (``endpoint_facts``), for the record.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from harness.errors import UserError
from harness.llm.base import BudgetExceeded, ChatConfig, EndpointUnusable, LLMError, Provider, Reply, Retries
from harness.llm.budget import Reservations
from harness.llm.prompts import check_backend
from harness.records.usage import Usage, total


@dataclass(frozen=True)
class LLMOptions:
    """Generator options shared by the LLM generators (constructor keyword arguments)."""

    provider: str | None = None          # openai | replay | builtin; None: choose (select_provider)
    llm_model: str | None = None
    llm_base_url: str | None = None
    backend: str = "triton"              # triton | cuda (load_inline)
    temperature: float = 0.0
    max_output_tokens: int | None = None  # per reply
    seed: int = 0
    timeout_s: float = 300.0
    cassette: str | None = None          # replay provider: the cassette file
    record: bool = False                 # replay provider: record real exchanges instead of replaying
    llm_price: str | None = None         # "INPUT,OUTPUT[,CACHED]" dollars per million tokens, over the table

    @classmethod
    def parse(cls, options: dict[str, Any]) -> "LLMOptions":
        known = {name: options.pop(name) for name in list(options) if name in cls.__dataclass_fields__}
        parsed = cls(**{k: v for k, v in known.items() if v is not None})
        check_backend(parsed.backend)
        _check(parsed.temperature >= 0, f"temperature {parsed.temperature!r} must be 0 or more")
        _check(parsed.timeout_s > 0, f"timeout_s {parsed.timeout_s!r} must be positive")
        _check(parsed.max_output_tokens is None or parsed.max_output_tokens > 0,
               f"max_output_tokens {parsed.max_output_tokens!r} must be positive")
        if parsed.llm_price is not None:
            from harness.llm.pricing import parse_price

            parse_price(parsed.llm_price, "generator option llm_price")
        return parsed

    def config(self, seed: int | None = None, temperature: float | None = None) -> ChatConfig:
        return ChatConfig(
            model=self.llm_model or "",
            temperature=self.temperature if temperature is None else temperature,
            max_tokens=self.max_output_tokens,
            seed=self.seed if seed is None else seed,
            timeout_s=self.timeout_s,
        )


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise UserError(f"generator option {message}")


def positive_int(options: dict[str, Any], name: str, default: int, minimum: int = 1) -> int:
    value = options.pop(name, None)
    value = default if value is None else value
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise UserError(f"generator option {name}={value!r} is not a whole number") from None
    _check(number >= minimum and number == float(value), f"{name}={value!r} must be a whole number >= {minimum}")
    return number


def refuse_unknown(generator: str, options: dict[str, Any]) -> None:
    if options:
        raise UserError(f"generator {generator!r} has no option(s) {', '.join(sorted(options))}; see docs/LLM.md")


def resolve_provider(options: LLMOptions, ctx: Any) -> Provider:
    """The harness's provider (``ctx.llm``) unless the generator's options ask for another
    (a different provider, endpoint, model or cassette); with neither, ``select_provider``."""
    from harness.llm import select_provider

    given = getattr(ctx, "llm", None)
    other_provider = options.provider is not None and options.provider != getattr(given, "name", None)
    if given is not None and not (other_provider or options.llm_base_url or options.llm_model or options.cassette):
        return given
    extra: dict[str, Any] = {}
    if options.provider == "replay" or options.cassette:
        extra = {"cassette": options.cassette, "mode": "record" if options.record else "replay"}
    if options.llm_price is not None:
        from harness.llm.pricing import parse_price

        extra["price"] = parse_price(options.llm_price)
    provider = select_provider(options.provider or ("replay" if options.cassette else None), model=options.llm_model,
                               base_url=options.llm_base_url, log=log_line(ctx), **extra)
    check_priced(provider, ctx)
    return provider


def check_priced(provider: Provider, ctx: Any) -> None:
    """A cost limit needs a price: refuse, before any call, a model the price table lacks."""
    limits = [getattr(getattr(ctx, name, None), "max_cost_usd", None) for name in ("budget", "run_budget")]
    price_of = getattr(provider, "price_of", None)
    if not any(limit is not None for limit in limits) or price_of is None:
        return
    model = provider.default_model()
    if price_of(model) is None:
        raise EndpointUnusable(
            f"a cost limit (--max-cost / --run-max-cost) is set, but model {model!r} has no price in the price "
            "table, so its cost would read $0 and the limit would never stop the run; give its price with "
            "--llm-price INPUT,OUTPUT (dollars per million tokens) or a CRUCIBLE_PRICES file, or drop the cost limit"
        )


def spent(records: Iterable[dict]) -> Usage:
    """What the given result records cost: a run's spending so far, for ``ctx.run_usage``."""
    return total(Usage.from_dict(record.get("usage")) for record in records)


class LLMSession:
    """Calls for one problem: metered, budget-checked, transcribed. Safe to share between threads."""

    def __init__(self, provider: Provider, ctx: Any):
        self.provider = provider
        self.budget = getattr(ctx, "budget", None)
        self.run_budget = getattr(ctx, "run_budget", None)
        self.run_spent = getattr(ctx, "run_usage", None) or Usage()
        # Shared by every process of a distributed run: the run's spending, live (harness/executors/ledger.py)
        self.run_ledger = getattr(ctx, "run_ledger", None)
        self.usage = Usage()
        self.transcript: list[dict] = []
        self.model: str | None = None
        self.retries = Retries()
        self.endpoint_error: str | None = None
        self.endpoint_fatal = False
        self._lock = threading.Lock()
        self._reservations = Reservations(self)

    def over_budget(self, usage: Usage | None = None) -> str | None:
        """Why generation must stop (a spent problem or run budget), or None."""
        spent = self.usage if usage is None else usage
        if self.budget is not None:
            reason = self.budget.exceeded_by(spent)
            if reason:
                return reason
        if self.run_budget is not None:
            run_spent = self.run_ledger.spent() if self.run_ledger is not None else self.run_spent + spent
            reason = self.run_budget.exceeded_by(run_spent)
            if reason:
                return f"run {reason}"
        return None

    def ask(self, agent: str, messages: list[dict], config: ChatConfig, **step: Any) -> tuple[Reply, dict]:
        """One metered call: the reply and its transcript step. Raises BudgetExceeded instead of
        calling when a budget is spent or the call's expected size would pass it, and the
        endpoint's failure (LLMError; EndpointUnusable stops every later call too)."""
        with self._reservations.hold(messages, config):
            try:
                reply = self._shared_call(messages, config) if self.run_ledger is not None \
                    else self.provider.chat(messages, config)
            except BudgetExceeded:
                raise
            except LLMError as error:
                self._failed(error)
                raise
            return reply, self.record(agent, messages, reply, **step)

    def _failed(self, error: LLMError) -> None:
        with self._lock:
            self.retries = self.retries + getattr(error, "retries", Retries())
            if not self.endpoint_fatal:
                self.endpoint_error = str(error)
                self.endpoint_fatal = isinstance(error, EndpointUnusable)

    def _shared_call(self, messages: list[dict], config: ChatConfig) -> Reply:
        """A call the run's ledger allowed: other processes' calls count against the run's limits too."""
        reason = self.run_ledger.acquire()
        if reason:
            raise BudgetExceeded(reason)
        usage = Usage()
        try:
            reply = self.provider.chat(messages, config)
            usage = reply.usage
        finally:
            self.run_ledger.release(usage)
        return reply

    def record(self, agent: str, messages: list[dict], reply: Reply, **step: Any) -> dict:
        entry = {"agent": agent, **step, "messages": messages, "reply": reply.text,
                 "finish_reason": reply.finish_reason, "usage": reply.usage.to_dict(), "cached": reply.cached,
                 "provider": reply.provider, "model": reply.model}
        if reply.original_usage is not None:
            entry["original_usage"] = reply.original_usage.to_dict()
        if reply.retries.count:
            entry["retries"] = reply.retries.to_dict()
        with self._lock:
            self.usage = self.usage + reply.usage
            self.retries = self.retries + reply.retries
            self.model = self.model or reply.model
            entry["step"] = len(self.transcript)
            self.transcript.append(entry)
        return entry

    def endpoint_facts(self) -> dict:
        """For a candidate's provenance: the retries taken and the endpoint failure that ended
        generation (``endpoint_error``; ``endpoint_fatal`` when the run must stop)."""
        with self._lock:
            facts: dict[str, Any] = {}
            if self.retries.count or self.retries.statuses:
                facts["retries"] = self.retries.to_dict()
            if self.endpoint_error:
                facts["endpoint_error"] = self.endpoint_error
                facts["endpoint_fatal"] = self.endpoint_fatal
            return facts

    def note(self, entry: dict, **fields: Any) -> None:
        """Add the judge's verdict (or other facts) to a transcript step after the fact."""
        with self._lock:
            entry.update(fields)

    @property
    def provider_name(self) -> str:
        return getattr(self.provider, "name", type(self.provider).__name__)


def log_line(ctx: Any) -> Callable[[str], None]:
    return getattr(ctx, "log", None) or print
