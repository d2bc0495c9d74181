"""Budget reservations: a call is sent only when what it is expected to cost fits what is left.

Checking a budget only after replies come back lets every call in flight pass it (``direct`` with
4 samples in parallel spent 4.2x its limit). So before a call is sent, its expected size is
reserved: the prompt's tokens counted locally, plus the reply's cap (``max_tokens``) or, without
one, the longest reply this problem has had; dollars at the model's price (or at the rate paid
so far). A call is sent when everything spent, everything reserved and its own estimate fit the
limits; when they do not, it waits for the calls in flight, and stops (``BudgetExceeded``) when
nothing is in flight to wait for. A call whose size cannot be estimated yet (the problem's first)
is sent only alone. So spending passes a limit only when a reply is longer than expected, and
then by at most one reply.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import replace
from typing import Any, Iterator

from harness.llm import tokens
from harness.llm.base import BudgetExceeded, ChatConfig, EndpointUnusable
from harness.records.usage import Usage


class Reservations:
    """The calls in flight for one session and what they are expected to cost."""

    def __init__(self, session: Any):
        self.session = session
        self.reserved = Usage()
        self.in_flight = 0
        self.unknown_in_flight = 0
        self.longest_reply = 0
        self._changed = threading.Condition()

    @contextlib.contextmanager
    def hold(self, messages: list[dict], config: ChatConfig) -> Iterator[None]:
        estimate = self._take(messages, config)
        try:
            yield
        finally:
            self._give_back(estimate)

    def _limited(self) -> tuple[bool, bool]:
        budgets = [b for b in (self.session.budget, self.session.run_budget) if b is not None]
        return (any(b.max_tokens is not None or b.max_cost_usd is not None for b in budgets),
                any(b.max_cost_usd is not None for b in budgets))

    def _take(self, messages: list[dict], config: ChatConfig) -> Usage | None:
        limited, cost_limited = self._limited()
        estimate = self._estimate(messages, config, cost_limited) if limited else Usage()
        with self._changed:
            while True:
                self._check_spent()
                if estimate is None:  # a reply may have come back since: now the size can be estimated
                    estimate = self._estimate(messages, config, cost_limited)
                if self.unknown_in_flight == 0:
                    if estimate is None and self.in_flight == 0:
                        self.unknown_in_flight += 1
                        break
                    if estimate is not None:
                        reason = self.session.over_budget(self.session.usage + self.reserved + estimate)
                        if reason is None:
                            self.reserved = self.reserved + estimate
                            break
                        if self.in_flight == 0:
                            raise BudgetExceeded(_not_sent(reason, estimate))
                self._changed.wait()
            self.in_flight += 1
        return estimate

    def _give_back(self, estimate: Usage | None) -> None:
        with self._changed:
            self.in_flight -= 1
            if estimate is None:
                self.unknown_in_flight -= 1
            else:
                self.reserved = _minus(self.reserved, estimate)
            replies = [int((step.get("usage") or {}).get("output_tokens") or 0) for step in self.session.transcript]
            self.longest_reply = max([self.longest_reply, *replies])
            self._changed.notify_all()

    def _check_spent(self) -> None:
        session = self.session
        if session.endpoint_fatal:
            raise EndpointUnusable(session.endpoint_error or "the endpoint failed")
        reason = session.over_budget()
        if reason:
            raise BudgetExceeded(reason)

    def _estimate(self, messages: list[dict], config: ChatConfig, cost_limited: bool) -> Usage | None:
        output = config.max_tokens or self.longest_reply
        if not output:
            return None
        usage = Usage(input_tokens=tokens.count_messages(messages), output_tokens=output, calls=1)
        if not cost_limited:
            return usage
        dollars = self._dollars(usage, config)
        return None if dollars is None else replace(usage, cost_usd=dollars)

    def _dollars(self, usage: Usage, config: ChatConfig) -> float | None:
        """At the model's price where the provider knows it, else at the rate paid so far."""
        provider = self.session.provider
        price_of = getattr(provider, "price_of", None)
        model = config.model or getattr(provider, "model", None)
        price = price_of(model) if price_of is not None and model else None
        if price is not None:
            return price.cost(usage)
        paid = self.session.usage + self.session.run_spent
        return paid.cost_usd / paid.total_tokens * usage.total_tokens if paid.total_tokens else None


def _not_sent(reason: str, estimate: Usage) -> str:
    size = f"about {estimate.total_tokens} tokens" + (f", ${estimate.cost_usd:.2g}" if estimate.cost_usd else "")
    return f"{reason.replace(' spent:', ' would be passed:', 1)} if the next call ({size}) were sent; it was not"


def _minus(a: Usage, b: Usage) -> Usage:
    return Usage(input_tokens=a.input_tokens - b.input_tokens, output_tokens=a.output_tokens - b.output_tokens,
                 cached_input_tokens=a.cached_input_tokens - b.cached_input_tokens,
                 reasoning_tokens=a.reasoning_tokens - b.reasoning_tokens, cost_usd=a.cost_usd - b.cost_usd,
                 calls=a.calls - b.calls)
