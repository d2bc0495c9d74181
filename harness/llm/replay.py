"""The ``replay`` provider: record real HTTP exchanges with an endpoint to a cassette, replay them offline.

Built on vcrpy, below the ``openai`` client, so a replayed run goes through exactly the code a
live run does (parsing, usage, retries: a recorded 500 then 200 replays as a retry). Requests
are matched on method, URL and body, so a changed prompt is a clear error, not a wrong answer;
the parts of a prompt that differ between machines (the device line with its measured peaks,
measured times) are masked before bodies are compared (``prompts.replay_view``), so a cassette
recorded on one machine replays on another. Credentials and cookies never reach the cassette.

Modes: ``replay`` (offline; a request not in the cassette is an error), ``record`` (real calls,
each saved as it completes; exchanges already recorded are replayed, so an interrupted recording
resumes where it stopped).
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.llm.base import ChatConfig, Reply
from harness.llm.openai_provider import OpenAIProvider
from harness.llm.prompts import replay_view
from harness.llm.retry import Failure

MODES = {"replay": "none", "record": "new_episodes"}
_HIDDEN_REQUEST_HEADERS = ["authorization", "api-key", "x-api-key", "openai-organization", "openai-project", "cookie"]
_HIDDEN_RESPONSE_HEADERS = {"set-cookie", "openai-organization", "openai-project"}


class ReplayProvider(OpenAIProvider):
    name = "replay"

    def __init__(self, cassette: str | Path | None = None, mode: str = "replay", **options: Any):
        if cassette is None:
            raise UserError("the replay provider needs a cassette file: --cassette PATH (or CRUCIBLE_CASSETTE)")
        if mode not in MODES:
            raise UserError(f"replay mode {mode!r} is not one of: {', '.join(MODES)}")
        self.cassette_path, self.mode = Path(cassette), mode
        if mode == "replay":
            recorded = _recorded_endpoint(self.cassette_path)
            options.setdefault("base_url", recorded[0])
            if not options.get("model"):
                options["model"] = recorded[1]
            options.setdefault("api_key", "replayed")  # never sent anywhere: no request leaves the process
        options["cache"] = None  # a recording must hold real exchanges, a replay needs no second copy
        super().__init__(**options)
        self._cassette = _open_cassette(self.cassette_path, MODES[mode])
        self._lock = threading.Lock()  # vcrpy patches process-wide: one exchange at a time

    def _attempt(self, messages: list[dict], config: ChatConfig, model: str) -> Reply:
        from vcr.patch import CassettePatcherBuilder

        with self._lock:
            try:
                with contextlib.ExitStack() as stack:
                    for patcher in CassettePatcherBuilder(self._cassette).build():
                        stack.enter_context(patcher)
                    return super()._attempt(messages, config, model)
            finally:
                self._cassette._save()  # after every exchange, so a killed recording keeps what it paid for

    def classify(self, error: BaseException) -> Failure | None:
        from vcr.errors import CannotOverwriteExistingCassetteException

        if isinstance(error, CannotOverwriteExistingCassetteException):
            return Failure(False, f"cassette {self.cassette_path} has no recorded answer for this request "
                                  "(the prompt, model or settings changed since it was recorded); record it again "
                                  "with --llm-record")
        return super().classify(error)


def _import_vcr():
    try:
        import vcr
    except ModuleNotFoundError:
        raise UserError("the replay provider needs vcrpy, which is not installed; "
                        "pip install vcrpy (or pip install 'crucible-kernels[llm]')") from None
    return vcr


def _open_cassette(path: Path, record_mode: str):
    vcr = _import_vcr()
    from vcr.cassette import Cassette

    recorder = vcr.VCR(
        record_mode=record_mode,
        match_on=["method", "scheme", "host", "port", "path", "query", "chat_body"],
        filter_headers=_HIDDEN_REQUEST_HEADERS,
        before_record_response=_scrub_response,
        decode_compressed_response=True,
    )
    recorder.register_matcher("chat_body", _same_body)
    config = recorder.get_merged_config(path=str(path))
    for option in ("path_transformer", "func_path_generator", "record_on_exception"):
        config.pop(option, None)  # options of vcrpy's context manager, not of the cassette
    if record_mode != "none":
        path.parent.mkdir(parents=True, exist_ok=True)
    return Cassette.load(**config)


def _same_body(recorded: Any, sent: Any) -> None:
    """vcrpy matcher: equal JSON bodies once machine-dependent prompt text is masked."""
    if _comparable(recorded.body) != _comparable(sent.body):
        raise AssertionError("the request bodies differ beyond machine-dependent prompt text")


def _comparable(body: Any) -> Any:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        data = json.loads(body) if body else None
    except (TypeError, ValueError):
        return body
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data["messages"] = [{**m, "content": replay_view(m["content"])} if isinstance(m.get("content"), str) else m
                            for m in data["messages"] if isinstance(m, dict)]
    return data


def _scrub_response(response: dict) -> dict:
    headers = response.get("headers", {})
    for name in list(headers):
        if name.lower() in _HIDDEN_RESPONSE_HEADERS:
            del headers[name]
    return response


def _recorded_endpoint(path: Path) -> tuple[str, str | None]:
    """Base URL and model of the cassette's first chat request, so a replay needs no options."""
    if not path.is_file():
        raise UserError(f"cassette {path} does not exist; record it first with --provider replay --llm-record")
    import yaml

    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise UserError(f"cassette {path} is not readable YAML ({error})") from None
    for interaction in data.get("interactions", []):
        request = interaction.get("request", {})
        uri = str(request.get("uri", ""))
        if uri.endswith("/chat/completions"):
            return uri[: -len("/chat/completions")], _model_of(request.get("body"))
    raise UserError(f"cassette {path} holds no chat completion exchange; record it again")


def _model_of(body: Any) -> str | None:
    if isinstance(body, dict):
        body = body.get("string")
    try:
        return json.loads(body).get("model") if body else None
    except (TypeError, ValueError, AttributeError):
        return None
