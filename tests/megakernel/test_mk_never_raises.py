"""Malformed input never raises; the fast reader is never laxer than the careful one; the oracle's
launch-contract check agrees with the validator's on what is malformed."""

import copy
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from schedules import kv_step, two_tile_join

from harness.megakernel import oracle, structure
from harness.megakernel.validator import validate

_json = st.recursive(st.none() | st.booleans() | st.integers(-3, 10) | st.floats(allow_nan=True) | st.text(max_size=4),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                     max_leaves=12)


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


def _check(doc):
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


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_subtree_replaced_by_any_json_gives_a_verdict(data):
    base = data.draw(st.sampled_from([two_tile_join(), kv_step()]))
    paths = list(_paths(base))
    path = data.draw(st.sampled_from(paths))
    _check(_replace(base, path, data.draw(_json)))


@settings(max_examples=100, deadline=None)
@given(_json)
def test_arbitrary_json_gives_a_rejected_verdict(value):
    verdict = validate(value)
    assert not verdict.ok and verdict.classes == ["malformed"]


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
        _check(doc)
        if validate(doc).stats.get("phase") != "structure":
            assert validate(doc).ok == oracle.label(doc)["safe"]
