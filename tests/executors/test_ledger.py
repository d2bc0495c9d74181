"""The run's shared ledger: calls side by side only while the run's limit would hold."""

from harness.candidate import Budget
from harness.executors.ledger import GO, STOP, WAIT, RunLedger

CALL = {"input_tokens": 100, "output_tokens": 50}


def test_calls_go_one_at_a_time_until_one_has_reported_its_cost():
    ledger = RunLedger(Budget(max_tokens=1000))
    assert ledger.acquire("a") == (GO, None)
    assert ledger.acquire("b") == (WAIT, None)
    ledger.release("a", CALL)
    assert ledger.acquire("b") == (GO, None)


def test_calls_run_side_by_side_only_while_the_largest_call_times_their_number_fits():
    ledger = RunLedger(Budget(max_tokens=599))
    ledger.acquire("a")
    ledger.release("a", CALL)                    # spent 150, a call costs up to 150
    assert ledger.acquire("a") == (GO, None)     # 150 + 150 <= 599
    assert ledger.acquire("b") == (GO, None)     # 150 + 2 * 150 <= 599
    assert ledger.acquire("c") == (WAIT, None)   # 150 + 3 * 150 > 599


def test_no_call_starts_once_the_run_is_over_its_limit_and_the_overshoot_is_one_call():
    ledger = RunLedger(Budget(max_tokens=200))
    spent_calls = 0
    while ledger.acquire("a")[0] == GO:
        ledger.release("a", CALL)
        spent_calls += 1
    answer, reason = ledger.acquire("b")
    assert answer == STOP and "run token budget spent: 300 > 200" in reason
    assert spent_calls == 2  # as locally: a call is allowed while spending is within the limit


def test_a_cost_limit_is_held_the_same_way():
    ledger = RunLedger(Budget(max_cost_usd=1.0))
    ledger.acquire("a")
    ledger.release("a", {"cost_usd": 0.4})
    assert ledger.acquire("a") == (GO, None)
    assert ledger.acquire("b") == (WAIT, None)   # 0.4 + 2 * 0.4 > 1.0


def test_without_limits_only_the_endpoint_concurrency_holds_calls_back():
    ledger = RunLedger(Budget(), max_concurrency=2)
    assert [ledger.acquire(k)[0] for k in "abc"] == [GO, GO, WAIT]
    ledger.release("a", CALL)
    assert ledger.acquire("c") == (GO, None)


def test_a_restarted_task_frees_the_calls_its_lost_start_left_under_way():
    ledger = RunLedger(Budget(max_tokens=1000))
    assert ledger.started("L1/x") == 1
    ledger.acquire("L1/x")                        # its node dies during this call
    assert ledger.acquire("L1/y") == (WAIT, None)
    assert ledger.started("L1/x") == 2
    assert ledger.acquire("L1/y") == (GO, None)


def test_spending_carried_in_counts_against_the_limit():
    ledger = RunLedger(Budget(max_tokens=100), spent={"input_tokens": 90, "output_tokens": 20})
    assert ledger.acquire("a")[0] == STOP
    assert ledger.spent()["input_tokens"] == 90
