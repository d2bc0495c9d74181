"""The numeric anchor: accepted lowerings, run on the reference VM, compute the eager Llama."""

import random

import pytest
import torch

from harness.errors import UserError
from harness.megakernel.configs import ScheduleConfig
from harness.megakernel.llama_ref import EagerLlama, init_weights
from harness.megakernel.lowering import lower
from harness.megakernel.suite import VM_MODELS
from harness.megakernel.validator import validate
from harness.megakernel.vm import ReferenceVM
from harness.megakernel.witness import witness_trace


def test_vm_matches_eager_llama_logits_and_greedy_tokens_on_every_lowering(mk_vm):
    section, results = mk_vm
    failures = [(r.model, r.schedule, r.max_abs_err, r.tokens_equal) for r in results if not r.ok]
    assert not failures
    assert section["vm"]["configs"] >= 12 and section["vm"]["lowerings"] >= 48
    assert section["vm"]["max_abs_err"] < 1e-4


def _kv_race(model):
    doc = lower(model, ScheduleConfig(num_sms=2), 0)
    attention = next(t for t in doc["tasks"] if t["op"] == "ATTENTION_TILE")
    appended = {t["out_counter"] for t in doc["tasks"] if t["op"] == "KV_APPEND"}
    attention["waits"] = [w for w in attention["waits"] if w["counter"] not in appended]
    return doc, attention["id"]


def test_vm_refuses_a_schedule_the_validator_rejects():
    model = VM_MODELS["tiny"]
    doc, _ = _kv_race(model)
    with pytest.raises(UserError, match="refuses"):
        ReferenceVM(init_weights(model)).run(doc, 1, random.Random(0))


def test_rejected_schedule_computes_wrong_logits_in_its_witness_interleaving():
    model = VM_MODELS["tiny"]
    doc, attention = _kv_race(model)
    verdict = validate(doc)
    race = next(v for v in verdict.violations if v["class"] == "kv_before_append")
    trace = witness_trace(doc, race) + [attention]
    weights = init_weights(model)
    racy = ReferenceVM(weights).run(doc, 1, random.Random(0), check=False, prefix=trace)
    expected = EagerLlama(model, weights)(torch.tensor([1]))[-1]
    assert not torch.allclose(racy.logits, expected, atol=1e-4, rtol=1e-4)
