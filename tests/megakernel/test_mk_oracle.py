"""The oracle: exhaustive and identity-aware on small schedules, sampled (and saying so) on large."""

from mk_schedules import chain, two_tile_join

from harness.megakernel import oracle
from harness.megakernel.configs import ModelConfig, ScheduleConfig
from harness.megakernel.lowering import lower
from harness.megakernel.validator import validate
from harness.megakernel.witness import witness_trace


def test_first_k_of_n_is_caught_by_identity_where_a_count_looks_fine():
    label = oracle.label(two_tile_join(threshold=1))
    assert label["mode"] == "exhaustive" and not label["safe"]
    read = next(v for v in label["violations"] if v["kind"] == "read_incomplete")
    # the reader starts having seen exactly one of the two tiles: which one is recorded
    assert len(read["seen"]) == 1 and len(read["missing"]) == 1 and read["trace"] == read["seen"]


def test_exhaustive_exploration_visits_every_reachable_state():
    label = oracle.label(two_tile_join())
    # states: {}, {0}, {1}, {0,1}, {0,1,2}
    assert label == {**label, "safe": True, "mode": "exhaustive", "states": 5}


def test_deadlock_comes_with_the_stuck_tasks_and_a_trace_to_the_stuck_state():
    doc = chain(3, sms=1)
    doc["tasks"][0]["waits"] = [{"counter": doc["tasks"][2]["out_counter"], "threshold": 1}]
    dead = oracle.label(doc)["violations"][0]
    assert dead["kind"] == "deadlock" and dead["tasks"] == [0, 1, 2] and dead["trace"] == []


def test_large_schedules_are_sampled_and_labelled_as_such():
    model = ModelConfig(hidden=32, layers=2, heads=4, kv_heads=2, head_dim=8, intermediate=64, vocab=32, max_seq=8)
    doc = lower(model, ScheduleConfig(num_sms=8, gemv_tile=4, attn_heads_per_task=1), pos=2)
    label = oracle.label(doc, max_states=2000, runs=4)
    assert label["mode"] == "sampled" and label["runs"] == 4 and label["safe"]


def test_validator_witness_replays_to_a_violation_on_the_oracle_machine():
    doc = chain(3, sms=3)
    doc["tasks"][2]["waits"] = []
    verdict = validate(doc)
    trace = witness_trace(doc, verdict.violations[0])
    kinds = {v["kind"] for v in oracle.replay(doc, trace)}
    assert "read_incomplete" in kinds


def test_replay_rejects_an_interleaving_the_counters_forbid():
    doc = chain(3, sms=3)
    assert oracle.replay(doc, [2])[-1]["kind"] == "illegal_trace"
