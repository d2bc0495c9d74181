"""The validator's speed: small schedules per second on one core, and the largest lowering."""


def test_validator_checks_at_least_25000_small_schedules_per_second_on_one_core(mk_throughput):
    assert mk_throughput["small_n"] >= 1000
    assert mk_throughput["small_per_s"] >= 25_000, mk_throughput


def test_largest_lowering_of_3500_tasks_validates_in_under_a_second(mk_throughput):
    largest = mk_throughput["largest"]
    assert largest["tasks"] >= 3500 and largest["accepted"]
    assert largest["seconds"] < 1.0, largest
