"""Property-based fuzzing of the validator against the oracle (needs hypothesis)."""

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed (pip install hypothesis)")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from mk_schedules import check_agreement, kv_step, paths, replace_at, two_tile_join  # noqa: E402

from harness.megakernel.validator import validate  # noqa: E402

_json = st.recursive(st.none() | st.booleans() | st.integers(-3, 10) | st.floats(allow_nan=True) | st.text(max_size=4),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                     max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_subtree_replaced_by_any_json_gives_a_verdict(data):
    base = data.draw(st.sampled_from([two_tile_join(), kv_step()]))
    path = data.draw(st.sampled_from(list(paths(base))))
    check_agreement(replace_at(base, path, data.draw(_json)))


@settings(max_examples=100, deadline=None)
@given(_json)
def test_arbitrary_json_gives_a_rejected_verdict(value):
    verdict = validate(value)
    assert not verdict.ok and verdict.classes == ["malformed"]


