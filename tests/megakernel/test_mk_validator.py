"""Each unsafe class is rejected with its reason and a witness; safe look-alikes are accepted."""

import copy

import pytest
from mk_schedules import chain, kv_step, two_tile_join

from harness.megakernel import oracle
from harness.megakernel.builder import ScheduleBuilder
from harness.megakernel.validator import validate


def _agree(doc) -> "Verdict":
    verdict = validate(doc)
    assert verdict.ok == oracle.label(doc)["safe"]
    return verdict


def _only(doc, cls):
    verdict = _agree(doc)
    assert not verdict.ok and cls in verdict.classes, verdict.report()
    return next(v for v in verdict.violations if v["class"] == cls)


def test_disjoint_tiles_joined_by_a_full_wait_are_accepted():
    assert _agree(two_tile_join()).ok


def test_wait_on_a_counter_nobody_increments_is_a_deadlock():
    doc = chain()
    doc["counters"].append({"id": 99, "init": 0})
    doc["tasks"][1]["waits"] = [{"counter": 99, "threshold": 1}]
    assert _only(doc, "wait_unproduced")["witness"] == {"task": 1, "counter": 99}


def test_threshold_above_the_producer_count_is_a_deadlock():
    witness = _only(two_tile_join(threshold=3), "threshold_exceeds_producers")["witness"]
    assert witness["threshold"] == 3 and witness["producers"] == 2


def test_task_waiting_on_its_own_counter_is_a_deadlock():
    doc = chain()
    doc["tasks"][1]["waits"].append({"counter": doc["tasks"][1]["out_counter"], "threshold": 1})
    assert _only(doc, "self_wait")["witness"]["task"] == 1


def test_producer_consumer_cycle_is_reported_with_the_cycle():
    doc = chain(3, sms=3)
    doc["tasks"][0]["waits"] = [{"counter": doc["tasks"][2]["out_counter"], "threshold": 1}]
    assert sorted(_only(doc, "cycle")["witness"]["cycle"]) == [0, 1, 2]


def test_queue_order_that_contradicts_the_graph_is_a_deadlock():
    doc = chain(2, sms=1)
    doc["tasks"].reverse()  # the consumer is now first in SM 0's queue
    assert "queue" in _only(doc, "queue_order")["witness"]["edges"]


def test_swapping_independent_tasks_in_a_queue_is_accepted():
    doc = two_tile_join(sms=1)
    doc["tasks"][0], doc["tasks"][1] = doc["tasks"][1], doc["tasks"][0]
    assert _agree(doc).ok


def test_read_without_waiting_for_the_writer_is_a_race_naming_the_pair_and_buffer():
    doc = chain()
    doc["tasks"][1]["waits"] = []
    witness = _only(doc, "raw")["witness"]
    assert (witness["writer"], witness["reader"], witness["buffer"]) == (0, 1, 1)


def test_redundant_wait_can_be_dropped_safely():
    doc = chain(3, sms=1)
    doc["tasks"][2]["waits"].append({"counter": doc["tasks"][0]["out_counter"], "threshold": 1})
    relaxed = copy.deepcopy(doc)
    relaxed["tasks"][2]["waits"].pop()
    assert _agree(doc).ok and _agree(relaxed).ok


def test_partial_wait_on_independent_producers_is_first_k_of_n():
    witness = _only(two_tile_join(threshold=1), "first_k_of_n")["witness"]
    assert witness["threshold"] == 1 and witness["producers"] == 2


def test_partial_wait_whose_first_producer_is_forced_is_accepted():
    # p1 and p2 share counter c; p2 waits c >= 1, which only p1 can satisfy, so "c >= 1" always
    # means "p1 finished". The reader needs only p1's buffer. A count-only rule (AMK's all-join)
    # rejects this; it is safe, and both the oracle and the validator say so.
    b = ScheduleBuilder({"name": "t", "num_sms": 3})
    x = b.buffer("x", "IO_INPUT", [1, 4])
    a, spare = (b.buffer(n, "ACTIVATION", [1, 4], space="GLOBAL_SCRATCH") for n in ("a", "spare"))
    z = b.buffer("z", "IO_OUTPUT", [1, 4])
    c, done = b.counter("shared"), b.counter("done")
    b.task("P1", [x], [a], c, sm=0)
    b.task("P2", [x], [spare], c, waits=[(c, 1)], sm=1)
    b.task("READ", [a], [z], done, waits=[(c, 1)], sm=2)
    assert _agree(b.doc).ok
    b.doc["tasks"][2]["inputs"] = [a, spare]  # now it also needs p2's write, which c >= 1 does not give
    assert "first_k_of_n" in _only(b.doc, "first_k_of_n")["class"]


def test_overlapping_unordered_tiles_are_a_write_after_write_race():
    doc = two_tile_join()
    doc["tasks"][1]["regions"][0]["box"] = [[0, 1], [1, 4]]
    assert _only(doc, "waw")["witness"]["writers"] == [0, 1]


def test_kv_cache_read_before_the_append_is_a_race():
    doc = kv_step()
    doc["tasks"][1]["waits"] = []
    assert _only(doc, "kv_before_append")["witness"]["reader"] == 1
    assert _agree(kv_step()).ok


def test_shared_page_with_overlapping_live_ranges_is_a_race():
    doc = two_tile_join()
    doc["buffers"].append({"id": 3, "name": "w", "kind": "ACTIVATION", "dtype": "F32", "shape": [1, 4],
                           "space": "GLOBAL_SCRATCH"})
    doc["tasks"][2]["outputs"] = [2, 3]
    doc["pages"] = {"buffer_to_page": {"1": 0, "3": 0}, "pages": [{"id": 0, "space": "GLOBAL_SCRATCH", "nbytes": 16}]}
    assert _only(doc, "war_page")["witness"]["buffers"] == [1, 3]


def test_shared_page_with_ordered_live_ranges_is_accepted():
    doc = chain(3, sms=2)
    doc["pages"] = {"buffer_to_page": {"1": 0, "2": 0}, "pages": [{"id": 0, "space": "GLOBAL_SCRATCH", "nbytes": 16}]}
    assert not _agree(doc).ok  # a1 is written while a0 is still being read: the same task touches both
    doc = chain(4, sms=2)
    doc["pages"] = {"buffer_to_page": {"1": 0, "3": 0}, "pages": [{"id": 0, "space": "GLOBAL_SCRATCH", "nbytes": 16}]}
    assert _agree(doc).ok


def test_shared_memory_buffer_read_from_another_sm_is_a_race():
    doc = chain(2, sms=2)
    doc["buffers"][1]["space"] = "SMEM"
    assert _only(doc, "onchip_cross_sm")["witness"]["reader"] == 1
    doc["tasks"][1]["sm"] = 0
    assert _agree(doc).ok


def test_read_of_a_buffer_nobody_writes_and_unwritten_outputs_are_rejected():
    doc = chain(2, sms=1)
    doc["tasks"][0]["outputs"] = []
    verdict = _agree(doc)
    assert {"read_unwritten"} <= set(verdict.classes)
    doc = chain(2, sms=1)
    doc["tasks"][1]["outputs"] = [1]
    assert "output_unwritten" in _agree(doc).classes


@pytest.mark.parametrize("edit, cls", [
    (lambda d: d["tasks"][0].update(sm=5), "sm_out_of_range"),
    (lambda d: d["target"].update(max_resident=1), "not_co_resident"),
    (lambda d: d["tasks"][0]["inputs"].append(42), "dangling_ref"),
    (lambda d: d["tasks"][2].update(waits=[{"counter": 0, "threshold": 2}] * 9), "caps_exceeded"),
    (lambda d: d["tasks"][2]["waits"][0].update(threshold=0), "bad_threshold"),
    (lambda d: d["tasks"][0].update(outputs=[0], regions=None), "write_readonly"),
    (lambda d: d.update(format="crucible.megakernel/2.0"), "malformed"),
    (lambda d: d["tasks"][0].update(sm="1"), "malformed"),
    (lambda d: d["tasks"][0].update(regions=[{"buffer": 1, "box": [[0, 1], [2, 9]]}]), "tile_out_of_bounds"),
])
def test_launch_contract_violations_are_rejected_by_name(edit, cls):
    doc = two_tile_join()
    edit(doc)
    verdict = validate(doc)
    assert not verdict.ok and cls in verdict.classes
    assert oracle.label(doc)["mode"] == "structural" and not oracle.label(doc)["safe"]


def test_largest_verdict_reports_are_bounded():
    doc = chain(60, sms=4)
    for task in doc["tasks"]:
        task["waits"] = []
    verdict = validate(doc)
    assert not verdict.ok and len(verdict.violations) <= 20
