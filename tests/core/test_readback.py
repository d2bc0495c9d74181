"""Checked timed outputs travel back through judge-owned readback buffers (harness.judge.timing).

The worker copies each timed output into the slot for its place in the batch, a buffer the judge
shared with it once, and lets go of it, so its own output blocks are never shared and never held
while the next call runs; these tests pin both sides of that exchange and that a worker which claims
a copy it did not make gains nothing.
"""

from types import SimpleNamespace

import pytest
import torch

from harness.judge import timing
from harness.judge.worker import handlers


class _Session:
    """Answers the judge's "outputs" request with a scripted function of the positions asked for."""

    def __init__(self, answer):
        self.answer, self.asked = answer, []

    def request(self, message, timeout_s, phase):
        self.asked.append(message)
        return self.answer(message["positions"])


def _batch(values):
    """One input set and its expected output per value: the output is the input times two."""
    sets = [[torch.full((4, 3), float(v))] for v in values]
    expected = {pos: ([s[0] * 2], [s[0].clone()]) for pos, s in enumerate(sets)}
    return sets, expected


def _check(session, sets, expected, readback, fingerprints):
    indices = list(range(len(sets)))
    reply = {"fingerprints": fingerprints}
    return timing._check_outputs(session, sets, indices, indices, expected, reply, 1e-4, 5.0, readback, None, {})


def test_worker_copies_outputs_that_fit_their_slot_and_keeps_the_rest():
    readback = timing.readback_buffers([torch.zeros(4, 3)], slots=2)
    assert handlers.keep_output(readback, 0, [torch.ones(4, 3)]) is None      # copied into slot 0
    assert torch.equal(readback[0][0], torch.ones(4, 3))
    kept = handlers.keep_output(readback, 1, [torch.ones(5, 3)])              # another shape: kept
    assert kept[0].shape == (5, 3) and not torch.equal(readback[1][0], torch.ones(4, 3))
    assert handlers.keep_output(readback, 2, [torch.ones(4, 3)]) is not None  # no slot that far
    state = SimpleNamespace(device="cpu", retained=[None, kept])
    reply = handlers.outputs(state, {"positions": [1, 0]})
    assert reply["outputs"][0] is kept and reply["outputs"][1] is None
    assert state.retained == []                                               # every kept output let go


def test_judge_accepts_copied_outputs_that_match():
    sets, expected = _batch([1.0, 3.0])
    readback = timing.readback_buffers(expected[0][0], slots=2)
    timing.poison_batch(readback, len(sets), expected)
    for pos, s in enumerate(sets):   # what the worker does right after each call
        handlers.keep_output(readback, pos, [s[0] * 2])
    honest = _Session(lambda positions: {"ok": True, "outputs": [None] * len(positions)})
    prints = [[handlers.fingerprint(s[0] * 2)] for s in sets]
    assert _check(honest, sets, expected, readback, prints) is None


def test_a_worker_that_claims_a_copy_it_did_not_make_is_incorrect():
    sets, expected = _batch([1.0, 3.0])
    readback = timing.readback_buffers(expected[0][0], slots=2)
    # The slots hold right answers from before; the judge poisons them before the batch.
    for pos in range(2):
        readback[pos][0].copy_(expected[pos][0][0])
    timing.poison_batch(readback, len(sets), expected)
    lazy = _Session(lambda positions: {"ok": True, "outputs": [None] * len(positions)})
    prints = [[handlers.fingerprint(s[0] * 2)] for s in sets]
    status, reason = _check(lazy, sets, expected, readback, prints)
    assert status == "incorrect" and "nan" in reason.lower()


def test_every_slot_of_a_batch_is_poisoned_checked_or_not():
    sets, expected = _batch([1.0, 3.0, 5.0])
    readback = timing.readback_buffers(expected[0][0], slots=4)
    for slot in readback:
        slot[0].fill_(7.0)
    timing.poison_batch(readback, 3, {1: expected[1]})   # only call 1 checked
    assert all(bool(readback[pos][0].isnan().all()) for pos in range(3))
    assert bool((readback[3][0] == 7.0).all())           # beyond the batch: left alone


def test_poison_differs_from_the_expected_output_for_every_dtype():
    for want in (torch.randn(6), torch.arange(6), torch.tensor([True, False, True]),
                 torch.arange(6, dtype=torch.uint8)):
        slot = [torch.empty_like(want)]
        slot[0].copy_(want)
        timing._poison_readback(slot, [want])
        differs = slot[0].isnan() if want.is_floating_point() else slot[0] != want
        assert bool(differs.all()), want.dtype
        stale = slot[0].clone()
        timing._poison_readback(slot, None)   # an unchecked call's slot: flipped from what it held
        differs = slot[0].isnan() if want.is_floating_point() else slot[0] != stale
        assert bool(differs.all()), want.dtype


def test_a_sent_output_of_the_wrong_shape_is_incorrect_and_a_malformed_reply_rejected():
    sets, expected = _batch([2.0])
    readback = timing.readback_buffers(expected[0][0], slots=1)
    wrong = _Session(lambda positions: {"ok": True, "outputs": [[torch.zeros(2, 2)]]})
    status, reason = _check(wrong, sets, expected, readback, [[0.0]])
    assert status == "incorrect" and "shape" in reason
    for outputs in ([None, None], "copied", [["not a tensor"]]):
        bad = _Session(lambda positions, o=outputs: {"ok": True, "outputs": o})
        assert _check(bad, sets, expected, readback, [[0.0]])[0] == "rejected"


# A candidate that fails on purpose when an earlier output of its own is still alive as it is called
# again. The cyclic collector is off, so only plain reference counting may free the outputs.
LIFETIME_PROBE = """
import gc
import torch
import torch.nn as nn
from torch.multiprocessing.reductions import StorageWeakRef

gc.disable()
_earlier = []

class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        alive = sum(1 for ref in _earlier if not ref.expired())
        out = torch.relu(x * 2.0 + self.bias)
        _earlier.append(StorageWeakRef(out.untyped_storage()))
        return out + 1.0 if alive else out
"""


@pytest.mark.parametrize("memory_budget", [1, 1 << 30], ids=["one_set", "several_sets"])
def test_the_worker_lets_go_of_each_output_before_the_next_call(scale_relu, memory_budget):
    """An output still alive at the next call makes that call allocate a new output block inside its
    window on the GPU: held until the cyclic collector ran (a frame kept alive by a reference cycle in
    the worker's thread scan), or kept until the judge read the batch's checked outputs (several sets
    a batch). Here such an output turns the candidate's answer wrong."""
    from harness.judge.evaluate import EvalCache, EvalOptions, evaluate
    from harness.judge.workers import WorkerLimits
    from harness.records.stats import StopRule
    from harness.judge.timing import TimingPlan

    opts = EvalOptions(trials=3, plan=TimingPlan(stop=StopRule(budget_ms=50), memory_budget_bytes=memory_budget),
                       limits=WorkerLimits(memory_bytes=3 << 30, load_s=60, first_call_s=20, call_s=20))
    record = evaluate(scale_relu, LIFETIME_PROBE, opts, EvalCache())
    assert record["status"] == "ok", record["reason"]
    assert record["timed_outputs_checked"] >= 8  # at least the 8 rounds of the stop rule, each checked
    assert (record["timed_input_sets"] == 1) == (memory_budget == 1)
