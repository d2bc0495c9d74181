"""Prompts: what the agents are shown, in the conventions the builtin provider parses."""

from __future__ import annotations

import pytest

from harness.errors import UserError
from harness.llm import prompts
from tests.llm.fake_judge import CORRECT, PROBLEM

H200 = {"name": "NVIDIA H200", "device_kind": "cuda", "flops_per_s": {"fp32": 5.0e13, "bf16": 7.0e14},
        "bytes_per_s": 4.0e12}
CPU = {"name": "CPU AMD EPYC", "device_kind": "cpu", "flops_per_s": {"fp32": 1e11}, "bytes_per_s": 2e10}


def test_the_task_shows_the_reference_in_a_python_block_with_class_model():
    system, user = prompts.generation_messages(PROBLEM, "triton", H200)
    assert system["role"] == "system" and user["role"] == "user"
    block = user["content"].split("```python\n", 1)[1].split("```", 1)[0]
    assert "class Model(nn.Module)" in block and "def get_inputs" in block


def test_crucible_metadata_is_not_shown_to_the_model():
    content = prompts.generation_messages(PROBLEM, "triton", H200)[1]["content"]
    assert "SMALL" not in content and "Crucible metadata" not in content


def test_the_system_prompt_names_backend_device_and_peaks():
    triton = prompts.system_prompt("triton", H200, "fp32")
    assert "@triton.jit" in triton and "NVIDIA H200" in triton
    assert "about 50 TFLOP/s" in triton and "about 4000 GB/s" in triton
    assert "load_inline" in prompts.system_prompt("cuda", H200)
    assert "interpreter" in prompts.system_prompt("triton", CPU) and "interpreter" not in triton


def test_an_unknown_backend_is_a_user_error():
    with pytest.raises(UserError, match="backend 'rocm'"):
        prompts.generation_messages(PROBLEM, "rocm", H200)


def test_repair_shows_the_candidate_as_the_assistant_turn_then_feedback():
    record = {"status": "compile_error", "reason": "SyntaxError: unmatched ')' (line 12)"}
    messages = prompts.repair_messages(PROBLEM, "triton", H200, CORRECT, prompts.feedback_text(record))
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2]["content"].startswith("```python\n") and "class ModelNew" in messages[2]["content"]
    assert messages[3]["content"].splitlines()[0] == "Feedback: compile_error"
    assert "unmatched ')'" in messages[3]["content"]


def test_mismatch_reports_and_flags_reach_the_feedback():
    record = {"status": "incorrect", "reason": "12 of 64 elements differ", "flags": ["no_custom_kernel"],
              "checks": {"mismatch": "at (0, 1): expected 1.5, got -1.5"}}
    text = prompts.feedback_text(record)
    assert text.startswith("Feedback: incorrect\n")
    assert "12 of 64 elements differ" in text and "expected 1.5, got -1.5" in text and "no_custom_kernel" in text


def test_long_errors_are_bounded_keeping_the_end():
    reason = "Traceback\n" + "  frame\n" * 2000 + "RuntimeError: the actual cause"
    text = prompts.feedback_text({"status": "runtime_error", "reason": reason})
    assert len(text) < prompts.MAX_FEEDBACK_CHARS + 300
    assert "RuntimeError: the actual cause" in text and "characters omitted" in text


def test_ok_feedback_reports_timing():
    text = prompts.feedback_text({"status": "ok", "correct": True, "candidate_ms": 0.5, "eager_ms": 2.0,
                                  "speedup": 4.0, "sol_fraction": 0.25})
    assert text.startswith("Feedback: ok\n") and "0.5 ms" in text and "4x" in text and "25.0%" in text


def test_the_analyst_sees_the_profile_and_the_distance_from_speed_of_light():
    record = {"status": "ok", "correct": True, "candidate_ms": 2.0, "flops": 4e10, "bytes": 4e9,
              "profile": [{"name": "triton_relu_kernel", "time_us": 1800.0, "calls": 3}]}
    system, user = prompts.analysis_messages(PROBLEM, CORRECT, record, H200, "fp32")
    assert "performance analyst" in system["content"]
    text = user["content"]
    assert "triton_relu_kernel: 1800.0 us over 3 call(s)" in text
    assert "Achieved compute: 20.000 TFLOP/s" in text and "= 40.0% of peak" in text
    assert "Achieved bandwidth (minimum bytes): 2000.0 GB/s" in text and "= 50.0% of peak" in text
    assert "class Model(" in text and "class ModelNew(" in text


def test_a_missing_profile_is_said_plainly():
    text = prompts.profile_summary({"status": "ok", "candidate_ms": None}, CPU)
    assert "not measured" in text and "No per-kernel profile" in text


def test_optimisation_feedback_carries_the_recommendation():
    record = {"status": "ok", "correct": True, "candidate_ms": 1.0}
    messages = prompts.optimisation_messages(PROBLEM, "triton", H200, CORRECT, record, "Fuse the scale into the ReLU.")
    last = messages[-1]["content"]
    assert last.startswith("Feedback: ok\n") and "Fuse the scale into the ReLU." in last


def test_peaks_measured_lazily_by_the_runner_reach_the_prompt():
    facts = {"device": "cuda", "name": "NVIDIA H200",
             "peaks": lambda: {"flops_per_s": {"fp32": 5.0e13}, "bytes_per_s": 4.0e12}}
    text = prompts.system_prompt("triton", facts)
    assert "about 50 TFLOP/s" in text and "about 4000 GB/s" in text and "interpreter" not in text


def test_a_failed_peak_measurement_only_leaves_the_peaks_out():
    def broken():
        raise RuntimeError("no timer")

    text = prompts.system_prompt("triton", {"device": "cpu", "name": "CPU x", "peaks": broken})
    assert "CPU x" in text and "TFLOP/s" not in text and "interpreter" in text
