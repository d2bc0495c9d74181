"""Retries with capped, jittered backoff for endpoint failures that go away (429, 5xx, timeouts).

A provider classifies each exception into a ``Failure``: retryable or not, fatal for the run or not
(a refused key, a missing model, an unreachable server, spent quota), with a message for the user
and the server's Retry-After when it sent one. ``call_with_retries`` does the waiting, within caps:
no single wait is longer than ``max_retry_after_s`` however long the server asks for, all waits of
one call add up to at most ``max_total_wait_s``, and an unreachable server is given up on after
``unreachable_wait_s``, so a run against a dead endpoint stops in seconds, not minutes.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass
from typing import Callable, Mapping, TypeVar

from harness.llm.base import EndpointUnusable, LLMError, Retries

T = TypeVar("T")


@dataclass(frozen=True)
class Failure:
    retryable: bool
    message: str
    retry_after_s: float | None = None
    fatal: bool = False        # the user must fix something (key, model, URL, quota): stop the run, say how
    status: object = None      # HTTP status, or "timeout" / "unreachable", for the record
    unreachable: bool = False  # no connection at all: given up on after unreachable_wait_s, then fatal


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5                 # tries in all, the first included
    base_delay_s: float = 1.0         # doubled after every failure, with jitter
    max_delay_s: float = 20.0
    max_retry_after_s: float = 30.0   # a server asking for longer is waited on this long, no more
    max_total_wait_s: float = 90.0    # all waits of one call together
    unreachable_wait_s: float = 4.0   # waits spent on a server that accepts no connection, before stopping

    def delay(self, failures: int, retry_after_s: float | None, rng: random.Random) -> float:
        """Seconds to wait after the ``failures``-th failure (1-based)."""
        if retry_after_s is not None:
            return max(0.0, min(retry_after_s, self.max_retry_after_s))
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** (failures - 1))
        # Jitter in [0.5, 1] of the backoff spreads out many clients that failed together.
        return backoff * (0.5 + 0.5 * rng.random())

    def wait_limit(self, failure: Failure) -> float:
        return min(self.max_total_wait_s, self.unreachable_wait_s) if failure.unreachable else self.max_total_wait_s


def call_with_retries(
    call: Callable[[], T],
    classify: Callable[[BaseException], Failure | None],
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[Failure, float], None] | None = None,
    rng: random.Random | None = None,
) -> tuple[T, Retries]:
    """``call()``'s result and the retries it took; an LLMError (EndpointUnusable when the run
    cannot go on) carrying those retries when it cannot succeed.

    Exceptions that ``classify`` does not recognise (returns None) are bugs and propagate as they are.
    """
    rng = rng or random.Random()
    retries = Retries()
    for attempt in range(1, policy.attempts + 1):
        try:
            return call(), retries
        except Exception as error:
            failure = classify(error)
            if failure is None:
                raise
            wait = policy.delay(attempt, failure.retry_after_s, rng)
            final = not failure.retryable or failure.fatal or attempt == policy.attempts
            if not final and retries.wait_s + wait > policy.wait_limit(failure):
                final = True
            if final:
                raise _give_up(failure, attempt, retries) from error
            retries = retries + Retries(1, (failure.status,), wait)
            if on_retry is not None:
                on_retry(failure, wait)
            sleep(wait)
    raise AssertionError("unreachable: the loop returns or raises")


def _give_up(failure: Failure, attempt: int, retries: Retries) -> LLMError:
    message = failure.message
    if attempt > 1:
        message += f" (gave up after {attempt} attempts, {retries.wait_s:.1f} s of waiting)"
    if failure.unreachable:
        message += "; is the server running, and is --llm-base-url (OPENAI_BASE_URL) right?"
    error = EndpointUnusable(message) if failure.fatal or failure.unreachable else LLMError(message)
    error.retries = retries + Retries(0, (failure.status,), 0.0)
    return error


def retry_after_seconds(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """The server's requested wait: ``retry-after-ms``, or ``retry-after`` in seconds or as a date."""
    if not headers:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return float(milliseconds) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))
