"""The ``openai`` provider: any OpenAI-compatible chat endpoint through the ``openai`` package.

OpenAI, vLLM, SGLang, Ollama and LiteLLM proxies all speak ``POST {base_url}/chat/completions``.
Configured by ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` (or explicit arguments). The client's own
retries are off: ours (``retry.py``) apply to every provider the same way and are tested. Usage is
what the endpoint reports; only parts it leaves out are counted locally and marked estimated.
"""

from __future__ import annotations

import os
import re
import threading
import time
from typing import Any, Callable

from harness.errors import UserError
from harness.llm import tokens
from harness.llm.base import ChatConfig, EndpointUnusable, LLMError, Reply
from harness.llm.cache import ResponseCache, cache_key, cacheable
from harness.llm.pricing import Price, PriceTable, load_prices
from harness.llm.retry import Failure, RetryPolicy, call_with_retries, retry_after_seconds
from harness.records.usage import Usage

OPENAI_URL = "https://api.openai.com/v1"
# Reasoning models take max_completion_tokens and refuse a temperature other than their default.
_REASONING_MODEL = re.compile(r"^(?:.*/)?(o\d|gpt-5)")
_RETRYABLE_STATUS = {408, 409, 429}
# What a /models entry says about the weights behind a name (vLLM: root is the checkpoint path).
_IDENTITY_FIELDS = ("id", "root", "parent", "owned_by")


def import_openai():
    try:
        import openai
    except ModuleNotFoundError:
        raise UserError(
            "the openai provider needs the openai package, which is not installed; "
            "pip install openai (or pip install 'crucible-kernels[llm]'), or use --provider builtin"
        ) from None
    return openai


class OpenAIProvider:
    """Chat completions with retries, a concurrency limit, a response cache and priced usage."""

    name = "openai"

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        max_concurrency: int = 8,
        retry: RetryPolicy | None = None,
        cache: ResponseCache | None = None,
        prices: PriceTable | None = None,
        price: Price | None = None,
        sleep: Callable[[float], None] = time.sleep,
        log: Callable[[str], None] = print,
    ):
        self._openai = import_openai()
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")
        self.model = model or os.environ.get("CRUCIBLE_LLM_MODEL") or None
        self.retry = retry or RetryPolicy()
        self.cache = cache
        self.prices = prices or load_prices()
        self.price = price  # the user's price for the model, over the table's
        self._sleep, self._log = sleep, log
        self._slots = threading.BoundedSemaphore(max(1, int(max_concurrency)))
        self._client = self._openai.OpenAI(base_url=self.base_url, api_key=self._api_key(api_key), max_retries=0)
        self._unpriced: set[str] = set()
        self._model_lock = threading.Lock()
        self._listing: list | None = None
        self._identity: dict[str, dict | None] = {}

    def _api_key(self, explicit: str | None) -> str:
        key = explicit or os.environ.get("OPENAI_API_KEY")
        if key:
            return key
        if self.base_url == OPENAI_URL:
            raise UserError(
                f"the openai provider points at {OPENAI_URL} but OPENAI_API_KEY is not set; "
                "export OPENAI_API_KEY, or set OPENAI_BASE_URL (--llm-base-url) to your own endpoint"
            )
        return "not-needed"  # vLLM, SGLang and Ollama accept any key; the client insists on one

    # -- the protocol ------------------------------------------------------------------------

    def chat(self, messages: list[dict], config: ChatConfig) -> Reply:
        model = config.model or self.default_model()
        key = self._cache_key(messages, config, model)
        if key is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return hit
        reply, retries = call_with_retries(
            lambda: self._attempt(messages, config, model), self.classify, self.retry,
            sleep=self._sleep, on_retry=self._note_retry,
        )
        reply.retries = retries
        if key is not None:
            self.cache.put(key, reply)
        return reply

    def _cache_key(self, messages: list[dict], config: ChatConfig, model: str) -> str | None:
        """The request's cache key, or None when it must not be cached (sampled, or a model the
        endpoint does not identify)."""
        if self.cache is None or not cacheable(config):
            return None
        served = self.served_identity(model)
        return None if served is None else cache_key(self.name, self.base_url, model, config, messages, served)

    def _attempt(self, messages: list[dict], config: ChatConfig, model: str) -> Reply:
        with self._slots:  # held for the request only, not while backing off
            response = self._client.chat.completions.create(
                model=model, messages=messages, timeout=config.timeout_s, **sampling_args(model, config)
            )
        return self._reply(response, messages, model)

    def _reply(self, response: Any, messages: list[dict], model: str) -> Reply:
        choices = getattr(response, "choices", None) or []
        reported = (getattr(response, "model_extra", None) or {}).get("error")
        if not choices and reported:  # some proxies answer 200 with an error body: keep what it says
            raise LLMError(f"{self.base_url} answered HTTP 200 with an error: {_short(_error_text(reported))}")
        if not choices:
            raise LLMError(f"{self.base_url} answered without any choices (model {model}); is it a chat endpoint?")
        message = choices[0].message
        text = (getattr(message, "content", None) or "") if message is not None else ""
        served = getattr(response, "model", None) or model
        usage = usage_from_response(getattr(response, "usage", None), messages, text)
        return Reply(text=text, usage=self._priced(usage, model, served), provider=self.name, model=served,
                     finish_reason=choices[0].finish_reason)

    def price_of(self, model: str) -> Price | None:
        """The price used for ``model``: the user's (``price``), else the table's."""
        return self.price or self.prices.lookup(model)

    def _priced(self, usage: Usage, requested: str, served: str) -> Usage:
        price = self.price_of(requested) or self.prices.lookup(served)
        cost = price.cost(usage) if price is not None else None
        if cost is None:
            if requested not in self._unpriced:
                self._unpriced.add(requested)
                self._log(f"crucible: no price for model {requested!r} in price table {self.prices.version}; "
                          "its cost is recorded as $0 (give it with --llm-price INPUT,OUTPUT or a CRUCIBLE_PRICES file)")
            cost = 0.0
        return Usage(**{**usage.to_dict(), "cost_usd": cost})

    # -- model discovery ---------------------------------------------------------------------

    def default_model(self) -> str:
        """``--llm-model`` (or ``CRUCIBLE_LLM_MODEL``), else the one model a local server (vLLM, Ollama) serves."""
        with self._model_lock:
            if self.model is None:
                self.model = self._discover_model()
            return self.model

    def _discover_model(self) -> str:
        try:
            served = sorted(entry["id"] for entry in self._models())
        except self._openai.OpenAIError as error:
            raise EndpointUnusable(f"no --llm-model given and {self.base_url}/models could not be listed "
                                   f"({_short(str(error))}); check --llm-base-url and OPENAI_API_KEY, "
                                   "or pass --llm-model") from None
        if len(served) == 1:
            return served[0]
        listing = ", ".join(served[:20]) or "none"
        raise EndpointUnusable(f"no --llm-model given and {self.base_url} serves {len(served)} models ({listing}); "
                               "pass --llm-model NAME")

    def _models(self) -> list[dict]:
        """The endpoint's /models listing, fetched once."""
        if self._listing is None:
            self._listing = [entry.model_dump() for entry in self._client.models.list(timeout=30)]
        return self._listing

    def served_identity(self, model: str) -> dict | None:
        """What the endpoint's /models listing says about ``model`` (id, and where given the
        checkpoint it was loaded from); None when the endpoint cannot say, and then nothing is cached."""
        with self._model_lock:
            if model not in self._identity:
                self._identity[model] = self._lookup_identity(model)
            return self._identity[model]

    def _lookup_identity(self, model: str) -> dict | None:
        try:
            entries = [entry for entry in self._models() if entry.get("id") == model]
        except self._openai.APIConnectionError:
            return None  # the chat request will say the endpoint is unreachable
        except self._openai.OpenAIError as error:
            self._log(f"crucible: response cache off for {model!r}: {self.base_url}/models could not be listed "
                      f"({_short(str(error), 120)}), so a cached reply could come from other weights")
            return None
        if not entries:
            self._log(f"crucible: response cache off for {model!r}: {self.base_url}/models does not list it")
            return None
        return {name: entries[0][name] for name in _IDENTITY_FIELDS if entries[0].get(name) is not None}

    # -- failures ----------------------------------------------------------------------------

    def classify(self, error: BaseException) -> Failure | None:
        """Which endpoint failures are worth retrying; None for anything that is not one (a bug)."""
        openai = self._openai
        if isinstance(error, openai.APITimeoutError):
            return Failure(True, f"{self.base_url} did not answer in time (timeout)", status="timeout")
        if isinstance(error, openai.APIConnectionError):
            cause = error.__cause__ or error
            return Failure(True, f"cannot reach {self.base_url}: {cause}", status="unreachable", unreachable=True)
        if isinstance(error, openai.APIStatusError):
            return self._status_failure(error)
        return None

    def _status_failure(self, error: Any) -> Failure:
        status = error.status_code
        detail = _short(getattr(error, "message", "") or str(error))
        headers = getattr(getattr(error, "response", None), "headers", None)
        said = f"{self.base_url} answered HTTP {status}: {detail}"
        if status == 429 and _code(error) == "insufficient_quota":  # waiting will not bring money back
            return Failure(False, f"{said} (the account's quota is spent; add credit or use another key)",
                           fatal=True, status=status)
        if status in _RETRYABLE_STATUS or status >= 500:
            return Failure(True, said, retry_after_seconds(headers), status=status)
        hint = {
            401: "the endpoint refused the API key; check OPENAI_API_KEY",
            403: "the API key may not use this model or endpoint; check OPENAI_API_KEY and --llm-model",
            404: "check --llm-model and --llm-base-url (the base URL usually ends in /v1)",
        }.get(status)
        if hint is None:
            return Failure(False, f"{said} (the request was refused)", status=status)
        return Failure(False, f"{said} ({hint})", fatal=True, status=status)

    def _note_retry(self, failure: Failure, wait_s: float) -> None:
        self._log(f"crucible: {failure.message}; retrying in {wait_s:.1f} s")


def sampling_args(model: str, config: ChatConfig) -> dict:
    args: dict[str, Any] = {}
    reasoning = bool(_REASONING_MODEL.match(model.lower()))
    if not reasoning:
        args["temperature"] = config.temperature
    if config.max_tokens is not None:
        args["max_completion_tokens" if reasoning else "max_tokens"] = config.max_tokens
    if config.seed is not None:
        args["seed"] = config.seed
    return args


def usage_from_response(reported: Any, messages: list[dict], text: str) -> Usage:
    """The endpoint's token counts; parts it leaves out are counted locally and marked estimated."""
    prompt = _int(getattr(reported, "prompt_tokens", None))
    completion = _int(getattr(reported, "completion_tokens", None))
    prompt_details = getattr(reported, "prompt_tokens_details", None)
    completion_details = getattr(reported, "completion_tokens_details", None)
    cached = _int(getattr(prompt_details, "cached_tokens", None))
    if cached is None:  # DeepSeek reports cache hits at the top level
        cached = _int(getattr(reported, "prompt_cache_hit_tokens", None))
    reasoning = _int(getattr(completion_details, "reasoning_tokens", None))
    if not prompt and not completion:  # no usage block, or an all-zero one (some servers send that)
        prompt = completion = None
    estimated = prompt is None or completion is None
    if prompt is None:
        prompt = tokens.count_messages(messages)
    if completion is None:
        completion = tokens.count_text(text)
    return Usage(input_tokens=prompt, cached_input_tokens=cached or 0, output_tokens=completion,
                 reasoning_tokens=reasoning or 0, calls=1, estimated=estimated)


def _code(error: Any) -> str | None:
    """The error code an OpenAI-style error body carries (``insufficient_quota``, ...)."""
    body = getattr(error, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    code = getattr(error, "code", None) or (body.get("code") or body.get("type") if isinstance(body, dict) else None)
    return str(code) if code else None


def _error_text(reported: Any) -> str:
    if isinstance(reported, dict):
        return str(reported.get("message") or reported)
    return str(reported)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
