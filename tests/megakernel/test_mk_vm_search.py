"""Reference VM against eager on one config; the cost model; the registered schedule search."""

import json
import random

from harness.megakernel import cost, vmcheck
from harness.megakernel.configs import PRESETS, ScheduleConfig
from harness.megakernel.llama_ref import init_weights
from harness.megakernel.lowering import lower
from harness.megakernel.validator import validate
from harness.megakernel.vm import ReferenceVM
from harness.registry import create, names

TINY = PRESETS["tiny"]


def test_vm_matches_eager_for_three_steps_in_random_orders():
    result = vmcheck.check(TINY, ScheduleConfig(num_sms=3, gemv_tile=4, attn_heads_per_task=1), steps=3)
    assert result.ok and result.max_abs_err < 1e-5 and len(result.tokens) == 4


def test_vm_orders_differ_by_seed_but_logits_do_not():
    doc = lower(TINY, ScheduleConfig(num_sms=4, gemv_tile=2), 0)
    weights = init_weights(TINY)
    a, b = (ReferenceVM(weights).run(doc, 3, random.Random(seed)) for seed in (1, 2))
    assert a.order != b.order and (a.logits - b.logits).abs().max() < 1e-6 and a.next_token == b.next_token


def test_cost_model_splits_bytes_per_sm_and_more_parallel_tiles_finish_sooner():
    model = PRESETS["small"]
    serial = cost.estimate(lower(model, ScheduleConfig(num_sms=1), 0))
    wide = cost.estimate(lower(model, ScheduleConfig(num_sms=8, gemv_tile=4, lm_head_tile=8), 0))
    assert sum(wide["per_sm_bytes"].values()) == wide["total_bytes"] and len(wide["per_sm_bytes"]) == 8
    assert wide["makespan_us"] < serial["makespan_us"]


class _FixedProposer:
    name = "fixed"

    def propose(self, model, history, rng, n):
        return [{"num_sms": 2, "gemv_tile": 4}, {"num_sms": 99}, {"num_sms": 1, "sm_policy": "nope"}]


def test_schedule_search_is_registered_and_keeps_only_valid_vm_correct_schedules():
    assert "schedule-search" in names("generator")
    search = create("generator", "schedule-search", budget=6, seed=3, proposers=[_FixedProposer(), "random"], vm_steps=2,
                    measure="off")   # the cost model's ranking, on any machine
    found = search.search("tiny")
    statuses = {e.status for e in found.history}
    assert "kept" in statuses and "infeasible" in statuses
    candidates = search.generate(TINY)
    assert candidates and all(validate(json.loads(c.source)).ok for c in candidates)
    spans = [c.provenance["makespan_us"] for c in candidates]
    assert spans == sorted(spans)
