"""Schedule search through the generator registry."""

from harness.megakernel.validator import validate


def test_search_keeps_only_validated_vm_correct_schedules_ranked_by_cost(mk_search):
    ranked = mk_search.ranked()
    assert ranked, [(e.status, e.reason) for e in mk_search.history]
    assert all(validate(e.doc).ok and e.vm_max_abs_err < 1e-4 for e in ranked)
    costs = [e.score_us for e in ranked]   # measured GPU time where a GPU is present, else the estimate
    assert costs == sorted(costs) and costs[0] > 0
    assert all(("gpu_us" in e.cost) == mk_search.measure for e in ranked)
    assert {e.status for e in mk_search.history} <= {"kept", "infeasible", "rejected", "vm_mismatch",
                                                      "not_runnable", "gpu_deadlock"}
