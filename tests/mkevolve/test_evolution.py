"""The evolution with a scripted provider and judge: search, split, merge, budgets, composition checks."""

from __future__ import annotations

import pytest

from harness.candidate import Budget
from harness.errors import UserError
from harness.judge.evaluate import EvalOptions
from harness.llm.session import LLMOptions, LLMSession
from harness.records.usage import Usage
from submitters.mkevolve import MKEvolve
from submitters.mkevolve.evolve import Evolution
from submitters.mkevolve.search import SearchShape, UnitSearch
from submitters.mkevolve.workspace import Workspace, decompose
from tests.mkevolve import toys


def by_name(candidate):
    return {unit["name"]: unit for unit in candidate.provenance["submodules"]}


def test_every_unit_with_a_verified_kernel_is_composed_and_checked_end_to_end():
    candidate, ctx = toys.run(toys.CHAIN, toys.ScriptedProvider())
    units = candidate.provenance["submodules"]
    assert [(u["ops"], u["status"]) for u in units] == [(["Linear"], "kernel"), (["relu", "mul", "tanh"], "kernel")]
    assert all(u["kernel_source_sha"] and u["tokens"] == 150 for u in units)
    assert "_mk_s0_ModelNew" in candidate.source and "_mk_s1_ModelNew" in candidate.source
    assert ctx.checked == [candidate.source]
    assert candidate.provenance["composition"]["checks"][0]["status"] == "ok"
    assert candidate.label == "mkevolve composition (2 kernels)" and candidate.provider == "scripted"


def test_a_unit_that_stays_incorrect_is_split_and_only_its_failing_part_stays_pytorch():
    candidate, _ = toys.run(toys.CHAIN, toys.ScriptedProvider(fail=("tanh",)), merge_share=1.0)
    final = [(u["ops"], u["status"]) for u in candidate.provenance["submodules"]]
    assert final[0] == (["Linear"], "kernel")
    assert (["tanh"], "pytorch") in final or (["mul", "tanh"], "pytorch") in final
    assert any(status == "kernel" and "relu" in ops for ops, status in final)
    split = candidate.provenance["history"][0]
    assert split["name"] == "s1" and split["status"] == "split"
    assert all(u.get("split_from") == "s1" for u in candidate.provenance["submodules"][1:])
    assert any(step.get("kind") == "split" for step in candidate.transcript)


def test_a_unit_without_code_stays_pytorch_with_the_providers_answer_as_the_reason():
    candidate, _ = toys.run(toys.CHAIN, toys.ScriptedProvider(refuse=("Linear",)), merge_share=1.0)
    linear = by_name(candidate)["s0"]
    assert linear["status"] == "pytorch" and "I cannot write that." in linear["note"]
    assert by_name(candidate)["s1"]["status"] == "kernel"


def test_on_the_cpu_a_merge_is_tried_by_the_byte_heuristic_and_kept_when_correct():
    candidate, _ = toys.run(toys.CHAIN, toys.ScriptedProvider(), merge_share=0.1)
    merge = candidate.provenance["merges"][0]
    assert merge["tried"] and merge["kept"] and "heuristic (speed not measured)" in merge["policy"]
    assert merge["intermediate_bytes"] == 64 * 8 * 4
    (merged,) = candidate.provenance["submodules"]
    assert merged["ops"] == ["Linear", "relu", "mul", "tanh"] and merged["merged_from"] == ["s0", "s1"]
    assert candidate.provenance["stage_usage"]["merge"]["calls"] == 1


def test_a_merge_below_the_byte_share_is_not_tried():
    candidate, _ = toys.run(toys.CHAIN, toys.ScriptedProvider(), merge_share=0.9)
    assert candidate.provenance["merges"][0]["tried"] is False
    assert candidate.provenance["stage_usage"]["merge"]["calls"] == 0


def measured_evolution(times: dict, budget: Budget | None = None, speedups: dict | None = None):
    """An evolution over CHAIN whose judge reports times, as on a GPU (the bandwidth makes the
    intermediate's round trip cost 4 ms)."""
    problem = toys.problem(toys.CHAIN)
    decomposition, run = decompose(problem, EvalOptions(timing=False), 6)
    space = Workspace(problem, EvalOptions(timing=False), decomposition, run)
    ctx = toys.context(budget=budget)
    session = LLMSession(toys.ScriptedProvider(times=times, speedups=speedups or {}), ctx)
    search = UnitSearch(session, LLMOptions(), {}, "fp32", toys.ScriptedJudge(), SearchShape(), True,
                        lambda stage, usage: None)
    evolution = Evolution(decomposition, space, search, 2, 0.25, {"bytes_per_s": 2 * 2048 / 4e-3},
                          lambda *a, **k: None)
    evolution.run()
    space.close()
    return evolution


def test_with_measured_time_a_merge_is_kept_only_when_faster_than_its_parts():
    faster = measured_evolution({"Linear": 3.0, "relu, mul, tanh": 2.0, "Linear, relu, mul, tanh": 4.0})
    assert faster.merges[0]["kept"] and "measured" in faster.merges[0]["policy"]
    assert [u.status for u in faster.units] == ["kernel"] and faster.units[0].best.ms == 4.0
    slower = measured_evolution({"Linear": 3.0, "relu, mul, tanh": 2.0, "Linear, relu, mul, tanh": 6.0})
    assert slower.merges[0]["tried"] and not slower.merges[0]["kept"]
    assert len(slower.units) == 2


NO_MERGE = {"Linear": 3.0, "relu, mul, tanh": 2.0, "Linear, relu, mul, tanh": 6.0}  # the merge is slower


def test_with_measured_time_a_kernel_slower_than_its_units_pytorch_goes_back_to_pytorch():
    evolution = measured_evolution(NO_MERGE, speedups={"Linear": 0.27, "relu, mul, tanh": 1.8})
    linear, chain = evolution.units
    assert (linear.status, chain.status) == ("pytorch", "kernel")
    assert linear.note == "kept in PyTorch: its best verified kernel ran at 0.27x PyTorch's speed on this unit (3 ms)"
    assert linear.best is not None and linear.best.accepted      # still on record, just not used


def test_when_every_kernel_is_slower_the_one_losing_least_time_stays():
    # Linear: 3 ms at 0.9x loses 0.3 ms; the chain: 2 ms at 0.5x loses 1 ms
    evolution = measured_evolution(NO_MERGE, speedups={"Linear": 0.9, "relu, mul, tanh": 0.5})
    assert [u.status for u in evolution.units] == ["kernel", "pytorch"]
    assert "the least time lost" in evolution.units[0].note
    assert "0.5x PyTorch's speed" in evolution.units[1].note


def test_kernels_at_or_above_pytorchs_speed_and_unmeasured_ones_are_kept():
    evolution = measured_evolution(NO_MERGE, speedups={"Linear": 1.0})   # the chain's speedup is not reported
    assert [u.status for u in evolution.units] == ["kernel", "kernel"]


def test_a_kernel_verified_just_before_the_budget_ran_out_is_kept():
    evolution = measured_evolution({}, budget=Budget(max_tokens=100))  # measured: s0's search goes on, then stops
    assert evolution.stopped == "token budget spent: 150 > 100"
    assert [u.status for u in evolution.units] == ["kernel", "pytorch"]


def test_a_spent_token_budget_stops_cleanly_keeping_the_kernels_found_so_far():
    ctx = toys.context(budget=Budget(max_tokens=100))
    candidate, _ = toys.run(toys.CHAIN, toys.ScriptedProvider(), ctx=ctx)
    assert candidate.provenance["stopped"] == "token budget spent: 150 > 100"
    units = by_name(candidate)
    assert units["s0"]["status"] == "kernel" and units["s1"]["status"] == "pytorch"
    assert "not searched: token budget spent" in units["s1"]["note"]
    assert candidate.source and candidate.usage.total_tokens == 150


def test_a_run_budget_spent_before_the_problem_gives_an_empty_candidate_with_the_reason():
    ctx = toys.context(run_budget=Budget(max_tokens=10), run_usage=Usage(input_tokens=20))
    candidate, _ = toys.run(toys.CHAIN, toys.ScriptedProvider(), ctx=ctx)
    assert candidate.source == "" and candidate.provenance["stopped"] == "run token budget spent: 20 > 10"


def test_a_kernel_that_breaks_the_whole_model_goes_back_to_pytorch():
    def evaluate(source):
        broken = "ops: relu, mul, tanh" in source
        return {"status": "incorrect" if broken else "ok", "correct": not broken, "reason": "trial 0", "flags": []}

    ctx = toys.context(evaluate=evaluate)
    candidate, _ = toys.run(toys.CHAIN, toys.ScriptedProvider(), ctx=ctx, merge_share=1.0)
    units = by_name(candidate)
    assert units["s0"]["status"] == "kernel" and units["s1"]["status"] == "pytorch"
    assert "failed end to end" in units["s1"]["note"]
    assert "ops: relu, mul, tanh" not in candidate.source
    assert [c["kernels"] for c in candidate.provenance["composition"]["checks"]] == [["s0", "s1"], ["s0"], ["s1"]]


def test_a_deterministic_provider_is_asked_each_prompt_once_and_a_repeat_stops_the_asking():
    builtin_like = toys.ScriptedProvider(name="builtin", fail=("tanh",))
    toys.run(toys.CHAIN, builtin_like, merge_share=1.0, iterations=1)
    other = toys.ScriptedProvider(fail=("tanh",))
    candidate, _ = toys.run(toys.CHAIN, other, merge_share=1.0, iterations=1)
    # builtin: one ask per prompt (s0, s1, then s1's repair); another provider: a second ask, repeated
    assert len(builtin_like.prompts) == 3
    assert len(other.prompts) == 4
    assert [s["verdict"] for s in candidate.transcript if s.get("verdict") == "duplicate"]


def test_stage_usage_and_unit_tokens_add_up_to_the_candidates_usage():
    candidate, _ = toys.run(toys.CHAIN, toys.ScriptedProvider(fail=("tanh",)), merge_share=0.1)
    stages = candidate.provenance["stage_usage"]
    assert set(stages) == {"decompose", "search", "merge", "compose"}
    total = sum(stage["input_tokens"] + stage["output_tokens"] for stage in stages.values())
    assert total == candidate.usage.total_tokens
    units = candidate.provenance["submodules"] + candidate.provenance["history"]
    rejected = sum(m.get("tokens", 0) for m in candidate.provenance["merges"] if not m.get("kept"))
    assert sum(u["tokens"] for u in units) + rejected == total


def test_options_are_checked_and_unknown_ones_refused():
    generator = MKEvolve(beam_width=3, depth=1, proposals=1, iterations=4, max_submodules=3, merge_share=0.5,
                         sub_trials=2)
    assert generator.settings()["beam_width"] == 3 and generator.settings()["sub_trials"] == 2
    assert generator.llm.temperature == 0.0
    assert MKEvolve().llm.temperature == 0.7
    with pytest.raises(UserError, match="beam_width"):
        MKEvolve(beam_width=0)
    with pytest.raises(UserError, match="merge_share"):
        MKEvolve(merge_share=2)
    with pytest.raises(UserError, match="no option"):
        MKEvolve(samples=3)


def test_the_registry_builds_mkevolve():
    from harness.registry import create

    assert isinstance(create("generator", "mkevolve", beam_width=1), MKEvolve)
