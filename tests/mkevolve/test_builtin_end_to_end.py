"""mkevolve with the offline builtin provider and the real judge (Triton in the CPU interpreter)."""

from __future__ import annotations

import pytest

from harness.candidate import Budget
from harness.judge.evaluate import EvalCache, EvalOptions, evaluate
from harness.judge.workers import WorkerLimits
from harness.executors.runner import Runner
from tests.mkevolve import toys

pytestmark = pytest.mark.slow


def quick_options() -> EvalOptions:
    return EvalOptions(timing=False, trials=2, limits=WorkerLimits(memory_bytes=3 << 30, load_s=120, first_call_s=60,
                                                                  call_s=60))


def test_builtin_composes_a_correct_model_for_a_conv_relu_bias_problem(tmp_path):
    problem = toys.problem(toys.CONV_RELU_BIAS, "L2/1_ConvReluBias")
    runner = Runner("mkevolve", quick_options(), tmp_path, generator_options={"provider": "builtin"},
                    budget=Budget(max_tokens=50_000), log=lambda line: None)
    (record,) = runner.run_problem(problem)
    assert record["status"] == "ok" and not record["flags"], record["reason"]
    provenance = record["provenance"]
    units = {u["name"]: u for u in provenance["submodules"]}
    assert units["s0"]["status"] == "kernel"  # the convolution is builtin's implicit-GEMM template
    assert units["s1"]["status"] == "kernel" and units["s1"]["ops"] == ["relu", "add"]
    assert record["provider"] == "builtin" and record["usage"]["input_tokens"] > 0
    assert provenance["stage_usage"]["search"]["calls"] == 2 and "stopped" not in provenance
    assert "@triton.jit" in record["candidate_source"] and "class ModelNew(_MkBase)" in record["candidate_source"]


def test_the_composed_source_stands_alone_under_the_judge():
    problem = toys.problem(toys.MATMUL_SOFTMAX, "L2/2_MatmulSoftmax")
    opts = quick_options()
    cache = EvalCache(opts.secret)

    def judged(source, timing=False, profile=False):
        return evaluate(problem, source, opts, cache)

    ctx = toys.context(evaluate=lambda source: judged(source))
    ctx.options = opts
    from submitters.mkevolve import MKEvolve

    candidate = MKEvolve(provider="builtin").generate(problem, ctx)[0]
    assert [u["status"] for u in candidate.provenance["submodules"]] == ["kernel", "kernel"]
    assert judged(candidate.source)["status"] == "ok"


@pytest.mark.gpu
def test_on_a_gpu_units_are_timed_and_merges_are_decided_by_measured_time(tmp_path):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from harness.judge.eval_setup import eval_options

    opts = eval_options(device="cuda", size="small", compile_baseline="off", timing_budget_ms=200)
    problem = toys.problem(toys.CHAIN, "L2/3_Chain")
    runner = Runner("mkevolve", opts, tmp_path, generator_options={"provider": "builtin"}, log=lambda line: None)
    (record,) = runner.run_problem(problem)
    assert record["status"] == "ok", record["reason"]
    provenance = record["provenance"]
    assert provenance["speed_measured"] and provenance["merge_policy"] == "measured time"
    kernels = [u for u in provenance["submodules"] if u["status"] == "kernel"]
    assert kernels and all(u["ms"] and u["speedup"] for u in kernels)
    assert all(m["policy"].startswith("measured") for m in provenance["merges"])
