"""The below_sol flag's floor leaves convolutions' FLOPs out: fast convolution algorithms (Winograd,
FFT) multiply less than the direct algorithm FlopCounterMode counts, and on the H200 cuDNN ran
AlexNet's 3x3 conv5 at 1.94x the fp32 matmul peak, which flagged an honest sub-kernel below_sol."""

from __future__ import annotations

import pytest
import torch

from harness.judge import sol

HEADER = "import torch\nimport torch.nn as nn\n\n"
CONV = HEADER + '''class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(2, 4, 16, 16)]


def get_init_inputs():
    return []
'''
MATMUL = HEADER + '''class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(64, 64), torch.randn(64, 64)]


def get_init_inputs():
    return []
'''
# The same product row by row: the same FLOPs, many times slower than one call (a candidate that
# beats its eager reference by far more than the flag's slack).
SLOW_MATMUL = MATMUL.replace("return a @ b", "return torch.stack([row @ b for row in a])")
FAST_MATMUL = SLOW_MATMUL + """

class ModelNew(Model):
    def forward(self, a, b):
        return a @ b
"""
PEAKS = {"device": "test", "flops_per_s": {"fp32": 1e6}, "bytes_per_s": 1e15}  # FLOPs dominate every floor


def test_count_work_gives_the_convolutions_share_at_the_direct_algorithms_flops():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 4))
    flops, conv = sol.count_work(model, [torch.randn(2, 3, 8, 8)])
    assert conv == 2 * 2 * 8 * 6 * 6 * 3 * 3 * 3      # 2 x batch x out channels x output pixels x in x kernel
    assert flops == conv + 2 * 2 * (8 * 6 * 6) * 4     # plus the Linear's product
    assert sol.count_flops(model, [torch.randn(2, 3, 8, 8)]) == flops


def test_the_flag_floor_is_the_sol_floor_without_convolution_flops():
    peaks = {"flops_per_s": {"fp32": 1e12}, "bytes_per_s": 1e12}
    assert sol.flag_floor_ms(4e9, 0, 1e6, peaks, "fp32") == sol.sol_ms(4e9, 1e6, peaks, "fp32") == 4.0
    assert sol.flag_floor_ms(4e9, 3e9, 1e6, peaks, "fp32") == 1.0
    assert sol.flag_floor_ms(4e9, 4e9, 2e9, peaks, "fp32") == 2.0   # all convolution: the bytes bound it


def _opts():
    from harness.judge.evaluate import EvalOptions
    from harness.judge.workers import WorkerLimits
    from harness.records.stats import StopRule
    from harness.judge.timing import TimingPlan

    return EvalOptions(timing=True, trials=5, plan=TimingPlan(stop=StopRule(min_rounds=3, budget_ms=50)),
                       limits=WorkerLimits(memory_bytes=3 << 30, load_s=60, first_call_s=30, call_s=30))


@pytest.mark.parametrize("source, candidate, flagged",
                         [(CONV, None, False), (SLOW_MATMUL, FAST_MATMUL, True)], ids=["convolution", "matmul"])
def test_a_time_below_the_nominal_floor_is_flagged_for_a_matmul_but_not_for_a_convolution(
        tmp_path, monkeypatch, source, candidate, flagged):
    """Judged for real (spawned worker, CPU timing) with a fp32 peak of 1 MFLOP/s, so that every
    measured time is far below the nominal floor. The floors are first raised to the rates the eager
    reference achieved (a peak is never below what the reference did): the matmul candidate, many
    times faster than its row-by-row reference, is still flagged; the convolution, whose flag floor
    is its bytes, is not, and its SOL fraction says it beat the nominal floor."""
    import harness.judge.device
    from harness.judge.baseline_workers import eager_source
    from harness.judge.evaluate import EvalCache, evaluate
    from harness.problems.problem import load_problem

    path = tmp_path / "1_Floor.py"
    path.write_text(source)
    problem = load_problem(path, size="full", level=1)
    monkeypatch.setattr(harness.judge.device, "peaks", lambda device: PEAKS)
    record = evaluate(problem, candidate or eager_source(problem), _opts(), EvalCache())
    assert record["status"] == "ok", record["reason"]
    assert record["candidate_ms"] and record["sol_fraction"] > 1
    assert ("below_sol" in record["flags"]) == flagged, record["flags"]
    if flagged:
        assert record["conv_flops"] == 0 and record["flag_floor_ms"] == record["sol_ms"]
        assert record["flag_floor_ms"] == pytest.approx(record["eager_ms"])     # raised to what eager achieved
        assert any(r.startswith("peaks_raised: ") for r in record["remarks"]), record["remarks"]
    else:
        assert record["conv_flops"] == record["flops"] > 0 and record["flag_floor_ms"] < record["sol_ms"]


def test_the_reference_as_candidate_is_never_under_a_floor_its_own_eager_run_disproves(tmp_path, monkeypatch):
    """With peaks far too low (a cold GPU measured them on an H100 and flagged the
    reference generator's ReLU below_sol), the record's floor is no higher than eager's own time."""
    import harness.judge.device
    from harness.judge.baseline_workers import eager_source
    from harness.judge.evaluate import EvalCache, evaluate
    from harness.problems.problem import load_problem

    path = tmp_path / "1_Floor.py"
    path.write_text(MATMUL)
    problem = load_problem(path, size="full", level=1)
    monkeypatch.setattr(harness.judge.device, "peaks", lambda device: PEAKS)
    record = evaluate(problem, eager_source(problem), _opts(), EvalCache())
    assert record["status"] == "ok", record["reason"]
    assert record["flag_floor_ms"] <= record["eager_ms"] * (1 + 1e-9)
    assert any(r.startswith("peaks_raised: eager ran at ") for r in record["remarks"]), record["remarks"]
