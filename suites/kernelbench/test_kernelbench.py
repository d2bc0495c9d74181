"""One test per KernelBench problem: the selected generator's best candidate must be correct.

Run with ``pytest suites/ --generator NAME``; see ``pytest --help`` under "Crucible" for options.
"""


def test_problem(crucible_problem, crucible_runner):
    import pytest

    if crucible_runner.already_done(crucible_problem):
        pytest.skip("already recorded in the run file (--resume)")
    records = crucible_runner.run_problem(crucible_problem)
    best = max(records, key=lambda r: (r["correct"], r.get("speedup") or 0.0))
    detail = f"{best['status']}: {best['reason']}" if best["reason"] else best["status"]
    assert best["correct"], f"{crucible_problem.id}: no correct candidate from {best['generator']} ({detail})"
