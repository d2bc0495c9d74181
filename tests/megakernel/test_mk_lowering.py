"""Lowering: a Llama config and a schedule config give a tiled, queued, safe decode step."""

import pytest

from harness.errors import UserError
from harness.megakernel import oracle
from harness.megakernel.configs import PRESETS, TARGETS, ModelConfig, ScheduleConfig
from harness.megakernel.format import queues
from harness.megakernel.lowering import lower, tiles
from harness.megakernel.validator import validate

TINY = PRESETS["tiny"]


def test_tiles_cover_the_range_with_a_narrower_last_tile():
    assert tiles(10, 4) == [(0, 4), (4, 8), (8, 10)] and tiles(10, 0) == [(0, 10)]


def test_tiny_untiled_lowering_has_one_task_per_stage():
    doc = lower(TINY, ScheduleConfig(num_sms=1))
    ops = [t["op"] for t in doc["tasks"]]
    assert ops.count("GEMV_TILE") == 8 and ops.count("KV_APPEND") == 2 and ops[0] == "EMBED" and ops[-1] == "SAMPLE_ARGMAX"
    assert len(doc["tasks"]) == 19


def test_every_wait_is_a_full_join_and_each_queue_is_in_emission_order():
    doc = lower(PRESETS["small"], ScheduleConfig(num_sms=3, gemv_tile=4, attn_heads_per_task=1))
    producers = {}
    for task in doc["tasks"]:
        producers[task["out_counter"]] = producers.get(task["out_counter"], 0) + 1
    assert all(w["threshold"] == producers[w["counter"]] for t in doc["tasks"] for w in t["waits"])
    assert all(q == sorted(q) for q in queues(doc).values()) and len(queues(doc)) == 3


@pytest.mark.parametrize("sched", [
    ScheduleConfig(num_sms=2, gemv_tile=3, lm_head_tile=5, silu_tile=6, attn_heads_per_task=1),
    ScheduleConfig(num_sms=4, gemv_tile=2, sm_policy="load_balance", paging="graph_color", smem_local=True),
    ScheduleConfig(num_sms=3, sm_policy="spread", paging="graph_color"),
])
def test_lowerings_are_accepted_and_safe_by_exhaustive_exploration(sched):
    doc = lower(TINY, sched, pos=3)
    label = oracle.label(doc)
    assert validate(doc).ok and label["safe"] and label["mode"] == "exhaustive"


def test_graph_colouring_reuses_pages_and_smem_local_moves_buffers_on_chip():
    doc = lower(PRESETS["small"], ScheduleConfig(num_sms=1, paging="graph_color", smem_local=True))
    bound = doc["pages"]["buffer_to_page"]
    assert len(set(bound.values())) < len(bound)
    assert {b["space"] for b in doc["buffers"] if b["kind"] == "ACTIVATION"} == {"SMEM"}


def test_kv_append_writes_the_row_of_the_position():
    doc = lower(TINY, ScheduleConfig(num_sms=1), pos=5)
    append = next(t for t in doc["tasks"] if t["op"] == "KV_APPEND")
    assert append["regions"][0]["box"][0] == [5, 6] and append["params"]["pos"] == 5


def test_llama_1b_lowering_has_more_than_3500_tasks():
    doc = lower(PRESETS["llama-1b"], ScheduleConfig(num_sms=132, gemv_tile=128, lm_head_tile=256,
                                                    attn_heads_per_task=4), pos=9, target=TARGETS["h200"])
    assert len(doc["tasks"]) > 3500


@pytest.mark.parametrize("make, message", [
    (lambda: ModelConfig(hidden=8, layers=1, heads=3, kv_heads=2, head_dim=4, intermediate=8, vocab=8), "multiple"),
    (lambda: ModelConfig(hidden=8, layers=1, heads=2, kv_heads=1, head_dim=3, intermediate=8, vocab=8), "even"),
    (lambda: ScheduleConfig(sm_policy="fastest"), "sm_policy"),
    (lambda: lower(TINY, ScheduleConfig(num_sms=200), target=TARGETS["h200"]), "200 SMs"),
    (lambda: lower(TINY, ScheduleConfig(), pos=64), "position"),
    (lambda: ScheduleConfig.from_dict({"tiles": 4}), "unknown"),
])
def test_bad_configs_raise_user_errors_that_say_what_to_change(make, message):
    with pytest.raises(UserError, match=message):
        make()
