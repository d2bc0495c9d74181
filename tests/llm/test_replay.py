"""The replay provider: record real exchanges with the scripted server, replay them offline."""

from __future__ import annotations

import pytest
import yaml

from harness.errors import UserError
from harness.llm.base import ChatConfig, LLMError
from harness.llm.replay import ReplayProvider
from harness.llm.retry import RetryPolicy
from harness.registry import create
from tests.llm.fake_judge import CORRECT
from tests.llm.generator_support import answer, context, problem
from tests.llm.scripted_server import completion, error

ASK = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "write a kernel"}]
QUIET = {"log": lambda line: None, "retry": RetryPolicy(attempts=3, base_delay_s=0.01)}


def record(server, cassette, *configs):
    recorder = ReplayProvider(cassette=cassette, mode="record", base_url=server.base_url, model="gpt-4o-mini",
                              api_key="sk-do-not-leak", **QUIET)
    return [recorder.chat(ASK, config) for config in configs]


def test_a_recorded_run_replays_offline_with_the_same_text_and_usage(server, tmp_path):
    cassette = tmp_path / "run.yaml"
    server.reply("first", prompt_tokens=321, completion_tokens=45, cached_tokens=21)
    server.reply("second", prompt_tokens=10, completion_tokens=2)
    recorded = record(server, cassette, ChatConfig(seed=1), ChatConfig(seed=2))
    server.stop()  # nothing may reach the network from here on

    player = ReplayProvider(cassette=cassette, **QUIET)
    replayed = [player.chat(ASK, ChatConfig(seed=1)), player.chat(ASK, ChatConfig(seed=2))]
    assert [r.text for r in replayed] == ["first", "second"]
    assert [r.usage for r in replayed] == [r.usage for r in recorded]
    assert replayed[0].usage.input_tokens == 321 and replayed[0].usage.cached_input_tokens == 21
    assert replayed[0].provider == "replay"


def test_replay_finds_base_url_and_model_in_the_cassette(server, tmp_path):
    cassette = tmp_path / "run.yaml"
    server.reply("hello")
    record(server, cassette, ChatConfig())
    player = ReplayProvider(cassette=cassette, **QUIET)
    assert player.base_url == server.base_url and player.model == "gpt-4o-mini"


def test_the_cassette_holds_no_credentials(server, tmp_path):
    cassette = tmp_path / "run.yaml"
    server.reply("hello")
    record(server, cassette, ChatConfig())
    text = cassette.read_text()
    assert "sk-do-not-leak" not in text
    request = yaml.safe_load(text)["interactions"][0]["request"]
    assert "authorization" not in {name.lower() for name in request["headers"]}
    assert "write a kernel" in request["body"]


def test_a_recorded_failure_replays_as_a_retry(server, tmp_path):
    cassette = tmp_path / "run.yaml"
    server.push(error(500, "flaky"))
    server.reply("after retry")
    record(server, cassette, ChatConfig())
    sleeps = []
    player = ReplayProvider(cassette=cassette, sleep=sleeps.append, **QUIET)
    assert player.chat(ASK, ChatConfig()).text == "after retry"
    assert len(sleeps) == 1


def test_a_request_not_in_the_cassette_is_a_clear_error_not_a_retry(server, tmp_path):
    cassette = tmp_path / "run.yaml"
    server.reply("hello")
    record(server, cassette, ChatConfig())
    sleeps = []
    player = ReplayProvider(cassette=cassette, sleep=sleeps.append, **QUIET)
    with pytest.raises(LLMError, match="no recorded answer for this request"):
        player.chat([{"role": "user", "content": "a different prompt"}], ChatConfig())
    assert sleeps == []


def test_an_interrupted_recording_resumes(server, tmp_path):
    cassette = tmp_path / "run.yaml"
    server.reply("one")
    record(server, cassette, ChatConfig(seed=1))
    server.reply("two")
    texts = [reply.text for reply in record(server, cassette, ChatConfig(seed=1), ChatConfig(seed=2))]
    assert texts == ["one", "two"]
    assert len(server.requests) == 2  # the first exchange came from the cassette


def test_a_missing_cassette_says_how_to_record_one(tmp_path):
    with pytest.raises(UserError, match="does not exist; record it first"):
        ReplayProvider(cassette=tmp_path / "absent.yaml")


def test_replay_needs_a_cassette_and_a_known_mode(tmp_path):
    with pytest.raises(UserError, match="needs a cassette"):
        ReplayProvider()
    with pytest.raises(UserError, match="mode 'rewind'"):
        ReplayProvider(cassette=tmp_path / "x.yaml", mode="rewind")


def test_a_generator_run_recorded_once_replays_offline_identically(server, tmp_path):
    from harness.registry import create
    from tests.llm.fake_judge import CORRECT, WRONG
    from tests.llm.generator_support import answer, context, problem
    from tests.llm.scripted_server import completion

    server.responder = lambda request: completion(answer(CORRECT if request["seed"] else WRONG),
                                                  prompt_tokens=700 + request["seed"], completion_tokens=90)
    cassette = tmp_path / "direct.yaml"
    recording = create("generator", "direct", samples=2, provider="replay", cassette=str(cassette), record=True,
                       llm_base_url=server.base_url, llm_model="gpt-4o-mini")
    recorded = recording.generate(problem(), context(None))
    server.stop()
    replaying = create("generator", "direct", samples=2, provider="replay", cassette=str(cassette))
    replayed = replaying.generate(problem(), context(None))
    assert [c.source for c in replayed] == [c.source for c in recorded] == [WRONG, CORRECT]
    assert [c.usage for c in replayed] == [c.usage for c in recorded]
    assert all(c.provider == "replay" for c in replayed)


def test_a_cassette_recorded_with_one_set_of_peaks_replays_with_another(server, tmp_path):
    cassette = tmp_path / "run.yaml"
    server.responder = lambda request: completion(answer(CORRECT), prompt_tokens=400 + request["seed"],
                                                  completion_tokens=90)
    recorder = ReplayProvider(cassette=cassette, mode="record", base_url=server.base_url, model="gpt-4o-mini",
                              api_key="sk", **QUIET)
    here = {"name": "CPU (x86_64, 2 cores)", "device_kind": "cpu", "flops_per_s": {"fp32": 1.0e11}, "bytes_per_s": 2.1e10}
    there = {"name": "CPU (x86_64, 16 cores)", "device_kind": "cpu", "flops_per_s": {"fp32": 1.8e11}, "bytes_per_s": 3.4e10}
    recorded = create("generator", "direct", samples=2).generate(problem(), context(recorder, device_facts=here))
    server.stop()

    player = ReplayProvider(cassette=cassette, **QUIET)
    replayed = create("generator", "direct", samples=2).generate(problem(), context(player, device_facts=there))
    assert [c.source for c in replayed] == [c.source for c in recorded] == [CORRECT, CORRECT]
    assert [c.usage for c in replayed] == [c.usage for c in recorded]
    assert "about 0.2 TFLOP/s" in replayed[0].transcript[0]["messages"][0]["content"]  # the prompt did differ
    print(f"\nSCENARIO | direct 2 samples recorded at 0.1 TFLOP/s, replayed at 0.18 | server {server.billed} | "
          f"records {sum(c.usage.calls for c in replayed)} calls, {sum(c.usage.total_tokens for c in replayed)} "
          "tokens | replayed, same records")


def test_a_changed_problem_still_misses_the_cassette(server, tmp_path):
    cassette = tmp_path / "run.yaml"
    server.reply(answer(CORRECT))
    recorder = ReplayProvider(cassette=cassette, mode="record", base_url=server.base_url, model="gpt-4o-mini",
                              api_key="sk", **QUIET)
    create("generator", "direct").generate(problem(), context(recorder))
    changed = problem()
    changed.source = changed.source.replace("torch.relu(x)", "torch.sigmoid(x)")
    player = ReplayProvider(cassette=cassette, **QUIET)
    [candidate] = create("generator", "direct").generate(changed, context(player))
    assert candidate.source == "" and "no recorded answer" in candidate.provenance["stopped"]
