"""The persistent megakernel on a GPU: the shipped lowerings decode like eager, and what the
validator rejects misbehaves there while what it accepts does not. Skipped without a GPU."""

import pytest

pytestmark = pytest.mark.gpu


def test_megakernel_decodes_every_shipped_lowering_like_eager_and_the_vm(mk_executor):
    bad = [d for d in mk_executor["decodes"] if not d["ok"]]
    assert not bad and len(mk_executor["decodes"]) == 12, bad


def test_every_accepted_schedule_gives_right_outputs_on_the_gpu(mk_executor):
    s = mk_executor["safety"]
    assert s["accepted"] > 0 and s["accepted_right"] == s["accepted"], s["by_verdict"]


def test_every_deadlock_reject_is_flagged_on_the_gpu_not_hung(mk_executor):
    s = mk_executor["safety"]
    assert s["deadlock_rejects"] > 0 and s["deadlock_flagged"] == s["deadlock_rejects"], s["by_verdict"]


def test_every_race_reject_gives_wrong_outputs_on_the_gpu(mk_executor):
    s = mk_executor["safety"]
    assert s["race_rejects"] > 0 and s["race_shown"] == s["race_rejects"], s["by_verdict"]
