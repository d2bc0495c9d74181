"""Checked timed outputs travel back through judge-owned readback buffers (harness.timing).

The worker copies a checked output into a slot the judge shared with it once, so its own output
blocks are never shared; these tests pin both sides of that exchange and that a worker which claims
a copy it did not make gains nothing.
"""

from types import SimpleNamespace

import torch

from harness import timing
from harness.worker import handlers


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
    return timing._check_outputs(session, sets, indices, indices, expected, reply, 1e-4, 5.0, readback)


def test_worker_copies_outputs_that_fit_a_slot_and_sends_the_rest():
    readback = timing.readback_buffers([torch.zeros(4, 3)], slots=2)
    state = SimpleNamespace(device="cpu", readback=readback,
                            retained=[[torch.ones(4, 3)], [torch.ones(5, 3)]])
    reply = handlers.outputs(state, {"positions": [0, 1]})
    assert reply["outputs"][0] is None                      # copied into slot 0
    assert torch.equal(readback[0][0], torch.ones(4, 3))
    assert reply["outputs"][1][0].shape == (5, 3)           # another shape: sent as it is
    assert state.retained == []                             # every kept output let go


def test_judge_accepts_copied_outputs_that_match():
    sets, expected = _batch([1.0, 3.0])
    readback = timing.readback_buffers(expected[0][0], slots=2)

    def honest(positions):
        for slot, pos in enumerate(positions):
            readback[slot][0].copy_(sets[pos][0] * 2)
        return {"ok": True, "outputs": [None] * len(positions)}

    prints = [[handlers.fingerprint(s[0] * 2)] for s in sets]
    assert _check(_Session(honest), sets, expected, readback, prints) is None


def test_a_worker_that_claims_a_copy_it_did_not_make_is_incorrect():
    sets, expected = _batch([1.0, 3.0])
    readback = timing.readback_buffers(expected[0][0], slots=2)
    # The slots hold last batch's right answers; the judge poisons them before asking.
    for slot, pos in enumerate(range(2)):
        readback[slot][0].copy_(expected[pos][0][0])
    lazy = _Session(lambda positions: {"ok": True, "outputs": [None] * len(positions)})
    prints = [[handlers.fingerprint(s[0] * 2)] for s in sets]
    status, reason = _check(lazy, sets, expected, readback, prints)
    assert status == "incorrect" and "nan" in reason.lower()


def test_poison_differs_from_the_expected_output_for_every_dtype():
    for want in (torch.randn(6), torch.arange(6), torch.tensor([True, False, True]),
                 torch.arange(6, dtype=torch.uint8)):
        slot = [torch.empty_like(want)]
        slot[0].copy_(want)
        timing._poison_readback(slot, [want])
        differs = slot[0].isnan() if want.is_floating_point() else slot[0] != want
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
# again. One input set, so every timed batch is one call and nothing is retained across calls by
# design; the cyclic collector is off, so only plain reference counting may free the outputs.
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


def test_the_worker_lets_go_of_each_output_before_the_next_call(scale_relu):
    """Outputs held until the cyclic collector runs (a frame kept alive by a reference cycle in the
    worker's thread scan did this) make every timed call on the GPU allocate a new output block
    inside its window. Here such an output turns the candidate's answer wrong."""
    from harness.evaluate import EvalCache, EvalOptions, evaluate
    from harness.judge import WorkerLimits
    from harness.stats import StopRule
    from harness.timing import TimingPlan

    opts = EvalOptions(trials=3, plan=TimingPlan(stop=StopRule(budget_ms=50), memory_budget_bytes=1),
                       limits=WorkerLimits(memory_bytes=3 << 30, load_s=60, first_call_s=20, call_s=20))
    record = evaluate(scale_relu, LIFETIME_PROBE, opts, EvalCache())
    assert record["status"] == "ok", record["reason"]
    assert record["timed_input_sets"] == 1 and record["timed_outputs_checked"] >= 10
