"""Every way a candidate can fail becomes a named verdict, and evaluation goes on afterwards."""

import pytest

HEADER = "import torch\nimport torch.nn as nn\n"
GOOD = HEADER + """
class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(dim))
    def forward(self, x):
        return torch.relu(x * 2.0 + self.bias)
"""


def body(forward: str, extra: str = "") -> str:
    return HEADER + extra + f"""
class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(dim))
    def forward(self, x):
{forward}
"""


CASES = {
    "syntax_error": (HEADER + "class ModelNew(nn.Module:\n    pass\n", "compile_error", "SyntaxError"),
    "missing_modelnew": (HEADER + "class Model(nn.Module):\n    pass\n", "compile_error", "no ModelNew"),
    "exception": (body("        raise ValueError('boom')"), "runtime_error", "ValueError"),
    "wrong_shape": (body("        return torch.relu(x * 2.0 + self.bias)[:, :-1]"), "incorrect", "shape"),
    "wrong_values": (body("        return torch.relu(x * 2.0 + self.bias) + 1e-2"), "incorrect", "values differ"),
    "nan_output": (body("        y = torch.relu(x * 2.0 + self.bias).clone()\n        y[0, 0] = float('nan')\n        return y"),
                   "incorrect", "NaN"),
    "hang": (body("        import time\n        time.sleep(3600)"), "timeout", "no answer"),
    "os_exit": (body("        import os\n        os._exit(0)"), "crashed", "exited with code 0"),
    "sys_exit": (body("        import sys\n        sys.exit(0)"), "crashed", "sys.exit"),
    "segfault": (body("        import ctypes\n        ctypes.string_at(0)"), "crashed", "SIGSEGV"),
    "memory_blowup": (body("        return torch.empty(1 << 40, dtype=torch.uint8)"), "crashed", "out of memory"),
    "not_a_tensor": (body("        return [1, 2, 3]"), "incorrect", "plain torch.Tensor"),
    "tensor_subclass": (body("        return torch.relu(x * 2.0 + self.bias).as_subclass(Lazy)",
                             "class Lazy(torch.Tensor):\n    pass\n"), "incorrect", "plain torch.Tensor"),
    "input_mutation": (body("        y = torch.relu(x * 2.0 + self.bias)\n        x.zero_()\n        return y"),
                       "incorrect", "input_mutated"),
    # right values, computed in the input's memory and returned as a view of it
    "aliases_input": (body("        return x.mul_(2.0).add_(self.bias).relu_().view(x.shape)"),
                      "incorrect", "output_aliases_input"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_failure_becomes_named_verdict(case, scale_relu, fast_opts):
    from harness.judge.evaluate import EvalCache, evaluate

    source, status, reason_part = CASES[case]
    if case == "hang":
        fast_opts.limits.first_call_s = 3
    record = evaluate(scale_relu, source, fast_opts, EvalCache())
    assert record["status"] == status, record["reason"]
    assert reason_part in record["reason"] + record.get("traceback", "") + str(record.get("checks", ""))
    assert record["correct"] is False


def test_evaluation_continues_after_each_failure(scale_relu, fast_opts):
    """One cache, a crash, a hang and a segfault in a row, then a good candidate: still judged correctly."""
    from harness.judge.evaluate import EvalCache, evaluate

    cache = EvalCache()
    fast_opts.limits.first_call_s = 3
    statuses = [evaluate(scale_relu, CASES[name][0], fast_opts, cache)["status"]
                for name in ("os_exit", "hang", "segfault", "exception")]
    final = evaluate(scale_relu, GOOD, fast_opts, cache)
    assert statuses == ["crashed", "timeout", "crashed", "runtime_error"]
    assert final["status"] == "ok" and final["correct"] is True


def test_empty_candidate_is_rejected_with_the_generators_reason(scale_relu, fast_opts):
    from harness.judge.evaluate import evaluate

    record = evaluate(scale_relu, "", fast_opts, identity={"stopped": "token budget spent"})
    assert record["status"] == "rejected"
    assert "token budget" in record["reason"]


def test_stale_memory_from_empty_is_incorrect(scale_relu, fast_opts):
    """torch.empty_like returns poisoned memory in the worker, never a plausible output."""
    from harness.judge.evaluate import evaluate

    record = evaluate(scale_relu, body("        return torch.empty_like(x)"), fast_opts)
    assert record["status"] == "incorrect"


def test_worker_output_is_captured_and_truncated(scale_relu, fast_opts):
    from harness.judge.evaluate import evaluate

    noisy = body("        print('x' * 100000)\n        raise RuntimeError('after printing')")
    record = evaluate(scale_relu, noisy, fast_opts)
    assert record["status"] == "runtime_error"
    assert 0 < len(record["worker_output"]) <= 2000
