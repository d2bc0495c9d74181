"""Retries with exponential backoff for endpoint failures that go away (429, 5xx, timeouts).

A provider classifies each exception into a ``Failure`` (retryable or not, with a message for the
user and the server's Retry-After when it sent one); ``call_with_retries`` does the waiting.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass
from typing import Callable, Mapping, TypeVar

from harness.errors import UserError
from harness.llm.base import LLMError

T = TypeVar("T")


@dataclass(frozen=True)
class Failure:
    retryable: bool
    message: str
    retry_after_s: float | None = None
    user_error: bool = False  # the user must fix something (key, model, URL): stop the run, say how


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5              # tries in all, the first included
    base_delay_s: float = 1.0      # doubled after every failure, with jitter
    max_delay_s: float = 30.0
    max_retry_after_s: float = 120.0  # a server asking for longer is not waited on past this

    def delay(self, failures: int, retry_after_s: float | None, rng: random.Random) -> float:
        """Seconds to wait after the ``failures``-th failure (1-based)."""
        if retry_after_s is not None:
            return max(0.0, min(retry_after_s, self.max_retry_after_s))
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** (failures - 1))
        # Jitter in [0.5, 1] of the backoff spreads out many clients that failed together.
        return backoff * (0.5 + 0.5 * rng.random())


def call_with_retries(
    call: Callable[[], T],
    classify: Callable[[BaseException], Failure | None],
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[Failure, float], None] | None = None,
    rng: random.Random | None = None,
) -> T:
    """``call()``, retried on retryable failures; an LLMError when it cannot succeed.

    Exceptions that ``classify`` does not recognise (returns None) are bugs and propagate as they are.
    """
    rng = rng or random.Random()
    for attempt in range(1, policy.attempts + 1):
        try:
            return call()
        except Exception as error:
            failure = classify(error)
            if failure is None:
                raise
            if failure.user_error:
                raise UserError(failure.message) from error
            if not failure.retryable:
                raise LLMError(failure.message) from error
            if attempt == policy.attempts:
                raise LLMError(f"{failure.message} (gave up after {attempt} attempts)") from error
            wait = policy.delay(attempt, failure.retry_after_s, rng)
            if on_retry is not None:
                on_retry(failure, wait)
            sleep(wait)
    raise AssertionError("unreachable: the loop returns or raises")


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
