"""Malformed input never raises; the fast reader is never laxer than the careful one; the oracle's
launch-contract check agrees with the validator's on what is malformed."""

import json
import random

from mk_schedules import check_agreement, paths, replace_at, two_tile_join

from harness.megakernel import oracle
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
