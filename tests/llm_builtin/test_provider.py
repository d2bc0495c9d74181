"""The builtin provider speaks the chat protocol: it reads the reference and feedback from the
conversation, replies with one code block or says plainly that it cannot, and names itself."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.llm.base import ChatConfig

REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return torch.sigmoid(self.linear(x))


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return [16]
'''

SORT = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sort(x, dim=1)[0]


def get_inputs():
    return [torch.randn(2, 5, 8)]


def get_init_inputs():
    return []
'''


@pytest.fixture
def provider():
    from harness.registry import create

    return create("provider", "builtin", model="ignored", log=print, unknown_option=1)


def task(reference: str = REFERENCE) -> list[dict]:
    from harness.llm.prompts import generation_messages

    return generation_messages(reference, "triton", {"name": "cpu", "device_kind": "cpu"})


def follow_up(reply_text: str, feedback: str, reference: str = REFERENCE) -> list[dict]:
    from harness.llm.extract import extract_code
    from harness.llm.prompts import repair_messages

    candidate = extract_code(reply_text).source
    return repair_messages(reference, "triton", {"name": "cpu"}, candidate, feedback)


def test_reply_holds_one_code_block_and_names_the_builtin(provider):
    reply = provider.chat(task(), ChatConfig())
    assert reply.text.count("```python") == 1
    assert "not a language model" in reply.text
    assert (reply.provider, reply.model, reply.finish_reason) == ("builtin", "builtin-rules-v1", "stop")
    assert "class ModelNew(nn.Module)" in reply.text and "@triton.jit" in reply.text


def test_usage_is_estimated_locally_and_costs_nothing(provider):
    reply = provider.chat(task(), ChatConfig())
    assert reply.usage.estimated and reply.usage.cost_usd == 0.0 and reply.usage.calls == 1
    assert reply.usage.input_tokens > 100 and reply.usage.output_tokens > 100


def test_unsupported_model_gets_a_plain_no_rule_reply_without_code(provider):
    reply = provider.chat(task(SORT), ChatConfig())
    assert reply.text.startswith("builtin: no rule for torch.sort")
    assert "```" not in reply.text
    assert reply.finish_reason == "unsupported"


def test_failure_feedback_gets_the_conservative_variant_then_a_plain_refusal(provider):
    first = provider.chat(task(), ChatConfig())
    second = provider.chat(follow_up(first.text, "Feedback: incorrect\nvalues differ"), ChatConfig())
    assert "builtin-variant: conservative" in second.text
    third = provider.chat(follow_up(second.text, "Feedback: runtime_error\nboom"), ChatConfig())
    assert third.finish_reason == "unsupported" and "```" not in third.text
    assert "no more conservative variant" in third.text


def test_ok_feedback_walks_the_tuning_variants_then_says_no_improvement_is_known(provider):
    reply = provider.chat(task(), ChatConfig())
    seen = []
    for _ in range(3):
        reply = provider.chat(follow_up(reply.text, "Feedback: ok\nIt runs in 1 ms."), ChatConfig())
        if reply.finish_reason != "stop":
            break
        seen.append(reply.text.split("builtin-variant: ")[1].split()[0])
    assert seen == ["wide", "narrow"]
    assert "no other tuning" in reply.text and "```" not in reply.text


def test_feedback_on_a_candidate_another_writer_made_starts_from_the_default_variant(provider):
    foreign = "```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    pass\n```"
    reply = provider.chat(follow_up(foreign, "Feedback: compile_error\nno kernel"), ChatConfig())
    assert "builtin-variant: default" in reply.text


def test_analyst_prompt_gets_advice_not_code(provider):
    from harness.llm.prompts import analysis_messages

    first = provider.chat(task(), ChatConfig())
    messages = analysis_messages(REFERENCE, first.text.split("```python\n")[1].split("```")[0],
                                 {"status": "ok", "candidate_ms": 1.0}, {"name": "H200"})
    reply = provider.chat(messages, ChatConfig())
    assert "```" not in reply.text and "rule-based" in reply.text


def test_conversation_without_a_reference_is_refused(provider):
    reply = provider.chat([{"role": "user", "content": "write me a kernel"}], ChatConfig())
    assert reply.finish_reason == "unsupported" and "no rule for a conversation without the reference" in reply.text


def test_reference_that_fails_to_import_is_refused_not_raised(provider):
    broken = "import a_module_that_does_not_exist\n" + REFERENCE
    reply = provider.chat(task(broken), ChatConfig())
    assert reply.finish_reason == "unsupported" and "fails to import" in reply.text


def test_select_provider_without_endpoint_falls_back_to_builtin(monkeypatch):
    from harness.llm import select_provider

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    messages = []
    chosen = select_provider(log=messages.append)
    assert chosen.name == "builtin" and "NOT a language model" in messages[0]


def test_importing_the_package_does_not_import_torch():
    code = "import sys, submitters.builtin; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
