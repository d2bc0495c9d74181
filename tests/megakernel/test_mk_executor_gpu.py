"""The executor on a real GPU: every shipped lowering, a 1B-class shape, and the safety demonstration.

Skipped without CUDA (the plugin skips ``gpu`` tests when no GPU is visible; the module guard keeps
them out of the interpreter, whose sequential programs cannot run real multi-SM placements).
Run on a GPU: ``PYTHONPATH=$PWD python -m pytest tests/megakernel/test_mk_executor_gpu.py -v -p no:cacheprovider``.
"""

import os
import time
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1",
                                 reason="needs a CUDA GPU and compiled Triton (TRITON_INTERPRET unset)")]

from harness.megakernel import executor_safety  # noqa: E402
from harness.megakernel.builder import ScheduleBuilder  # noqa: E402
from harness.megakernel.configs import PRESETS  # noqa: E402
from harness.megakernel.executor import Megakernel  # noqa: E402
from harness.megakernel.executor_check import decode, decode_against_eager, device_weights  # noqa: E402
from harness.megakernel.suite import VM_MODELS, VM_SCHEDULES  # noqa: E402
from harness.megakernel.throughput import LARGEST  # noqa: E402


@pytest.mark.parametrize("schedule", range(len(VM_SCHEDULES)))
@pytest.mark.parametrize("model", sorted(VM_MODELS))
def test_every_shipped_lowering_decodes_like_eager_and_the_vm(model, schedule):
    result = decode(VM_MODELS[model], VM_SCHEDULES[schedule], steps=8, device="cuda")
    assert result.ok, result.to_dict()
    assert result.steps == 8


def test_a_reader_on_an_earlier_sm_waits_for_a_later_one():
    """The hand-off the interpreter cannot show: program 0 waits on program 1's counter."""
    b = ScheduleBuilder({"name": "t", "num_sms": 2})
    x = b.buffer("x", "IO_INPUT", [1, 4])
    y = b.buffer("y", "ACTIVATION", [1, 4], space="GLOBAL_SCRATCH")
    z = b.buffer("z", "IO_OUTPUT", [1, 4])
    made, done = b.counter(), b.counter()
    b.task("ADD", [y, y], [z], done, waits=[(made, 1)], sm=0)
    b.task("ADD", [x, x], [y], made, sm=1)
    prepared = Megakernel({}, "cuda").prepare(b.doc, delays={1: 2000})
    for value in (1.0, 2.5):
        launch = prepared.step({"x": [value] * 4})
        assert launch.ok and launch.outputs["z"].tolist() == [[4 * value] * 4]


def test_a_cycle_across_sms_is_a_flagged_verdict_within_seconds():
    b = ScheduleBuilder({"name": "t", "num_sms": 2})
    x = b.buffer("x", "IO_INPUT", [1, 4])
    y = b.buffer("y", "ACTIVATION", [1, 4], space="GLOBAL_SCRATCH")
    z = b.buffer("z", "IO_OUTPUT", [1, 4])
    a, c = b.counter(), b.counter()
    b.task("ADD", [x, x], [y], a, waits=[(c, 1)], sm=0)
    b.task("ADD", [y, y], [z], c, waits=[(a, 1)], sm=1)
    prepared = Megakernel({}, "cuda", spin_bound=1 << 20).prepare(b.doc, check=False)
    started = time.perf_counter()
    launch = prepared.step({"x": [1.0] * 4})
    assert time.perf_counter() - started < 30
    assert not launch.ok and {row["program"] for row in launch.deadlock["stuck"]} == {0, 1}
    assert prepared.counters.tolist() == [0, 0, 0]


def test_a_1b_class_llama_decodes_greedy_tokens_like_eager():
    model = PRESETS["llama-1b"]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    sched = replace(LARGEST, num_sms=min(LARGEST.num_sms, sms))
    weights = device_weights(model, seed=0)
    result = decode_against_eager(model, sched, weights, steps=6)
    assert result["ok"], result


def test_rejected_schedules_misbehave_on_the_gpu_and_accepted_ones_do_not():
    model = VM_MODELS["gqa2"]
    found = executor_safety.cases(model, VM_SCHEDULES[1:], per_class=2)
    outcomes = executor_safety.run_sandboxed(model, found, device="cuda", timeout_s=600)
    summary = executor_safety.summarize(outcomes)
    assert summary["cases"] == len(found), summary
    assert summary["accepted"] > 0 and summary["accepted_right"] == summary["accepted"], summary
    assert summary["deadlock_rejects"] > 0 and summary["deadlock_flagged"] == summary["deadlock_rejects"], summary
    assert summary["race_rejects"] > 0 and summary["race_shown"] == summary["race_rejects"], summary
