"""Malformed input never raises; the fast reader is never laxer than the careful one; the oracle's
launch-contract check agrees with the validator's on what is malformed."""

import copy
import json
import random

import pytest
from mk_schedules import kv_step, two_tile_join

from harness.megakernel import oracle, structure
from harness.megakernel.validator import validate

def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


def _replace(doc, path, new):
    doc = copy.deepcopy(doc)
    if not path:
        return new
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return doc


def check(doc):
    verdict = validate(doc)
    label = oracle.label(doc, max_states=500, runs=2)
    assert isinstance(verdict.ok, bool) and "internal_error" not in verdict.classes
    structural = verdict.stats.get("phase") == "structure"
    assert structural == (label["mode"] == "structural"), (verdict.classes, label)
    fast = structure._fast(doc) if _safe_fast(doc) else None
    assert fast is None or not structural


def _safe_fast(doc) -> bool:
    try:
        structure._fast(doc)
        return True
    except Exception:
        return False


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
        path = rng.choice(list(_paths(base)))
        doc = _replace(base, path, rng.choice(values))
        check(doc)
        if validate(doc).stats.get("phase") != "structure":
            assert validate(doc).ok == oracle.label(doc)["safe"]
