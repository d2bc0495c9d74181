"""Whole runs (``python -m harness run`` and the pytest suite, in their own processes) against the
scripted OpenAI-compatible server on loopback, through the real openai client and the real CPU judge.

The server plays a model whose usage depends on the request (prompt tokens counted from the
messages, half of a repeated prompt reported as cached), and adds up what it billed: the records
must say the same. An endpoint that refuses or disappears must stop the run quickly, say what to
fix, and leave what was measured on disk.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.llm import tokens
from tests.llm.scripted_server import Scripted, completion, error

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = ROOT / "tests" / "fixtures" / "problems_root"
pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow  # whole runs in their own processes, with the real judge


def task_code(request: dict) -> str:
    return re.search(r"```python\n(.*?)```", request["messages"][1]["content"], re.DOTALL).group(1)


def correct_answer(request: dict) -> str:
    return f"Done.\n\n```python\n{task_code(request)}\nModelNew = Model\n```\n"


def billed_like_a_server(request: dict, text: str) -> dict:
    prompt = tokens.count_messages(request["messages"])
    cached = prompt // 2 if len(request["messages"]) > 2 else 0  # a repair repeats the task: a prefix cache hit
    return completion(text, prompt_tokens=prompt, completion_tokens=tokens.count_text(text), cached_tokens=cached)


def thinking_model(request: dict) -> dict:
    """No code on the first try, the problem's own model (correct) once told so."""
    repairing = request["messages"][-1]["content"].startswith("Feedback: compile_error")
    text = correct_answer(request) if repairing else "Let me think about the memory layout first."
    return billed_like_a_server(request, text)


def run_cli(server_url: str, runs: Path, generator: str, *extra: str, cache: str = "off") -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "harness", "run", "--generator", generator, "--level", "1",
               "--kernelbench-root", str(PROBLEMS), "--runs-dir", str(runs), "--no-timing",
               "--llm-base-url", server_url, "--llm-model", "test-model", *extra]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "sk-test", "CRUCIBLE_LLM_CACHE": cache}
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)


def records(runs: Path) -> list[dict]:
    """Whole records (transcripts put back from the details file) of every run file, in order."""
    from harness.records.results import read_run

    return [record for path in sorted(runs.glob("*.jsonl")) for record in read_run(path)[1]]


def recorded_bill(found: list[dict]) -> dict:
    usage = [record["usage"] for record in found]
    return {"calls": sum(u["calls"] for u in usage), "prompt_tokens": sum(u["input_tokens"] for u in usage),
            "completion_tokens": sum(u["output_tokens"] for u in usage),
            "cached_tokens": sum(u["cached_input_tokens"] for u in usage)}


def report(scenario: str, server, found: list[dict], outcome: str) -> None:
    """One row of the closing table: what the server billed against what the records say."""
    print(f"\nSCENARIO | {scenario} | server {server.billed} | records {recorded_bill(found)} | {outcome}")


@pytest.mark.parametrize("cache", ["off", "on"])
def test_kforge_records_bill_exactly_what_the_server_billed(server, tmp_path, cache):
    server.responder = thinking_model
    folder = str(tmp_path / "llm-cache") if cache == "on" else "off"
    runs = tmp_path / "runs"
    for _ in range(2):  # a run and its rerun: with the cache on the rerun sends nothing and pays nothing
        done = run_cli(server.base_url, runs, "kforge", "--max-optimisation-passes", "0", cache=folder)
        assert done.returncode == 0, done.stderr
    found = records(runs)
    assert len(found) == 4 and all(record["correct"] for record in found)
    assert recorded_bill(found) == server.billed
    steps = [step for record in found for step in record["transcript"]]
    assert len(steps) == 8 and server.billed["calls"] == (4 if cache == "on" else 8)
    assert sum(step["cached"] for step in steps) == (4 if cache == "on" else 0)
    for step in steps:
        if step["cached"]:
            assert step["usage"]["input_tokens"] == 0 and step["original_usage"]["input_tokens"] > 0
    report(f"kforge, 2 problems, run + rerun, cache {cache}", server, found, "all correct, bills equal")


def test_a_refused_key_stops_the_run_with_the_fix_and_keeps_what_was_measured(server, tmp_path):
    server.responder = lambda request: (billed_like_a_server(request, correct_answer(request)) if len(server.requests) == 1
                                        else error(401, "Incorrect API key provided"))
    done = run_cli(server.base_url, tmp_path / "runs", "direct")
    stopped = time.time()
    assert done.returncode == 2
    assert "HTTP 401" in done.stderr and "check OPENAI_API_KEY" in done.stderr and "--resume" in done.stderr
    assert stopped - server.arrived[-1] < 30 and len(server.requests) == 2  # refused at once, never retried
    found = records(tmp_path / "runs")
    assert [(r["problem_id"], r["status"]) for r in found] == [("L1/1_Scale_ReLU", "ok"), ("L1/2_Row_Softmax", "endpoint_error")]
    assert "HTTP 401" in found[1]["endpoint_error"]
    report("direct, 401 on the 2nd problem", server, found, f"run stopped {stopped - server.arrived[-1]:.1f} s after the 401")


def test_a_missing_model_stops_the_run_before_any_problem(server, tmp_path):
    server.responder = lambda request: error(404, "The model `test-model` does not exist")
    started = time.time()
    done = run_cli(server.base_url, tmp_path / "runs", "direct")
    assert done.returncode == 2 and "HTTP 404" in done.stderr and "--llm-model" in done.stderr
    assert time.time() - started < 30 and len(server.requests) == 1
    found = records(tmp_path / "runs")
    assert [r["status"] for r in found] == ["endpoint_error"]
    report("direct, 404 on the 1st request", server, found, f"run stopped after {time.time() - started:.1f} s")


def test_a_server_that_goes_away_stops_the_run_in_seconds(server, tmp_path):
    died = []

    def die():
        server.stop()
        died.append(time.time())

    def answer_then_die(request):  # a reply without code: judged at once, so the clock below is the run's
        die()  # no new connections from here on, and this one is closed after the reply
        return Scripted(body=billed_like_a_server(request, "I cannot write this one."), headers={"connection": "close"})

    server.responder = answer_then_die
    done = run_cli(server.base_url, tmp_path / "runs", "direct")
    stopped = time.time()
    assert done.returncode == 2 and "cannot reach" in done.stderr and "is the server running" in done.stderr
    assert stopped - died[0] < 30
    found = records(tmp_path / "runs")
    assert [r["status"] for r in found] == ["rejected", "endpoint_error"]
    assert set(found[1]["provenance"]["retries"]["statuses"]) == {"unreachable"}
    report("direct, server gone after the 1st reply", server, found, f"run stopped {stopped - died[0]:.1f} s later")


def test_a_dead_port_stops_the_run_in_seconds(tmp_path):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.time()
    done = run_cli(f"http://127.0.0.1:{port}/v1", tmp_path / "runs", "direct")
    assert done.returncode == 2 and "cannot reach" in done.stderr
    assert time.time() - started < 30


def test_under_pytest_a_refused_key_ends_the_session_and_the_messages_are_shown(server, pytester, tmp_path):
    server.responder = lambda request: (billed_like_a_server(request, correct_answer(request)) if len(server.requests) == 1
                                        else error(401, "Incorrect API key provided"))
    result = pytester.runpytest_subprocess(
        str(ROOT / "suites" / "kernelbench" / "test_kernelbench.py"), "--level", "1", "--kernelbench-root", str(PROBLEMS),
        "--runs-dir", str(tmp_path / "runs"), "--generator", "direct", "--llm-base-url", server.base_url,
        "--llm-model", "test-model", "--no-timing", "-p", "no:cacheprovider")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 2 and "HTTP 401" in output and "check OPENAI_API_KEY" in output
    assert "no price for model 'test-model'" in output  # the unpriced-model notice, in the warnings summary
    assert len(server.requests) == 2
