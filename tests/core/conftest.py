from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture(scope="session")
def scale_relu():
    from harness.problems.problem import load_problem

    return load_problem(FIXTURES / "problems" / "1_Scale_ReLU.py", size="small", level=1)


@pytest.fixture
def fast_opts():
    """Correctness only, short per-phase timeouts: failure verdicts come quickly."""
    from harness.judge.evaluate import EvalOptions
    from harness.judge.workers import WorkerLimits

    return EvalOptions(timing=False, trials=3, limits=WorkerLimits(memory_bytes=3 << 30, load_s=60, first_call_s=20, call_s=20))
