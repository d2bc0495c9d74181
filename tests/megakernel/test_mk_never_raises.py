"""Malformed input never raises; the fast reader is never laxer than the careful one, which, going
on from the fast one's first doubt, names what a whole careful read names; ids other than positions
get the verdict of the densely numbered schedule; the oracle's launch-contract check agrees with
the validator's on what is malformed."""

import json
import random

from mk_schedules import chain, check_agreement, paths, replace_at, two_tile_join

from harness.megakernel import oracle, structure
from harness.megakernel.validator import validate


def test_deeply_nested_and_odd_values_do_not_crash():
    deep = []
    for _ in range(5000):
        deep = [deep]
    doc = two_tile_join()
    doc["tasks"][0]["params"] = {"x": deep}
    for value in (deep, doc, float("nan"), b"bytes", {"format": None}, json.loads("[1, 2]")):
        assert isinstance(validate(value).ok, bool)
    doc = two_tile_join()
    doc["tasks"][0]["id"] = True  # a bool is not an id
    assert "malformed" in validate(doc).classes


def test_random_field_edits_keep_validator_and_oracle_in_agreement():
    rng = random.Random(7)
    base = two_tile_join()
    values = [None, -1, 0, 1, 2, 3, 99, 1.0, "1", [], {}, [1], True]
    for _ in range(400):
        path = rng.choice(list(paths(base)))
        doc = replace_at(base, path, rng.choice(values))
        check_agreement(doc)
        if validate(doc).stats.get("phase") != "structure":
            assert validate(doc).ok == oracle.label(doc)["safe"]


def _careful_only(doc) -> list[dict]:
    r = structure._Reader()
    structure._read(doc, r, [])
    return [v for v in r.found if v is not None]


def test_careful_reader_going_on_from_the_fast_readers_first_doubt_names_what_a_whole_careful_read_names():
    for edit in (
        lambda d: d["tasks"][4].update(sm=9, inputs=[99]),              # a late task with two problems
        lambda d: d["target"].update(max_resident=1),                    # every task passes, the launch fails
        lambda d: (d["tasks"][1].update(id=0), d["tasks"][5].update(sm=-1)),  # a repeated id before the doubt
        lambda d: d["tasks"][0].update(outputs=[0]),                     # the first task writes an input
    ):
        doc = chain(6, sms=3)
        edit(doc)
        verdict = validate(doc)
        assert verdict.stats["phase"] == "structure" and verdict.violations == _careful_only(doc)


def _renumbered(doc, buffer_base: int, counter_base: int) -> dict:
    doc = json.loads(json.dumps(doc))
    for buf in doc["buffers"]:
        buf["id"] += buffer_base
    for counter in doc["counters"]:
        counter["id"] += counter_base
    for task in doc["tasks"]:
        task["inputs"] = [b + buffer_base for b in task["inputs"]]
        task["outputs"] = [b + buffer_base for b in task["outputs"]]
        task["out_counter"] += counter_base
        for wait in task["waits"]:
            wait["counter"] += counter_base
        for region in task.get("regions") or []:
            region["buffer"] += buffer_base
    return doc


def test_ids_other_than_positions_take_the_careful_reader_and_get_the_same_verdict():
    for doc in (two_tile_join(), two_tile_join(threshold=1), chain(4, sms=2)):
        dense, sparse = validate(doc), validate(_renumbered(doc, 100, 7))
        assert structure._fast(_renumbered(doc, 100, 7)) is None  # (the fast reader takes dense ids only)
        assert (sparse.ok, sparse.classes, sparse.stats) == (dense.ok, dense.classes, dense.stats)
