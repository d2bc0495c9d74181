"""Schedule search through the generator registry."""

from harness.megakernel.validator import validate


def test_search_keeps_only_validated_vm_correct_schedules_ranked_by_cost(mk_search):
    ranked = mk_search.ranked()
    assert ranked, [(e.status, e.reason) for e in mk_search.history]
    assert all(validate(e.doc).ok and e.vm_max_abs_err < 1e-4 for e in ranked)
    costs = [e.makespan_us for e in ranked]
    assert costs == sorted(costs) and costs[0] > 0
    assert {e.status for e in mk_search.history} <= {"kept", "infeasible", "rejected", "vm_mismatch"}
