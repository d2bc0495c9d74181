"""Pure pieces of the core: statistics, comparisons, size rewriting, seeds, usage, registry, results."""

import json
import math
from pathlib import Path

import pytest


def test_quantile_and_summary_match_hand_computed_values():
    from harness.records.stats import quantile, summarize

    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    s = summarize([4.0, 1.0, 3.0, 2.0, 100.0])
    assert s.median_ms == 3.0 and s.min_ms == 1.0 and s.n == 5
    assert s.iqr_ms == pytest.approx(4.0 - 2.0)
    assert s.ci_low_ms <= s.median_ms <= s.ci_high_ms


def test_bootstrap_interval_is_deterministic_and_narrows_with_more_samples():
    from harness.records.stats import bootstrap_median_ci

    few = [1.0, 1.2, 0.9, 1.1, 1.3, 0.8]
    many = few * 20
    assert bootstrap_median_ci(few) == bootstrap_median_ci(few)
    lo_f, hi_f = bootstrap_median_ci(few)
    lo_m, hi_m = bootstrap_median_ci(many)
    assert hi_m - lo_m <= hi_f - lo_f


def test_stop_rule_needs_min_rounds_then_stops_on_a_narrow_interval_or_the_budget():
    from harness.records.stats import RatioStats, StopRule

    rule = StopRule(min_rounds=5, max_rounds=50, target_halfwidth=0.01, budget_ms=100)
    narrow, wide = RatioStats(1.0, 0.995, 1.005, 5), RatioStats(1.0, 0.9, 1.1, 5)
    assert rule.done([narrow], 4, 0) is None              # too few rounds, however narrow
    assert rule.done([narrow], 5, 0) == "narrow"
    assert rule.done([narrow, wide], 5, 10) is None       # every interval must be narrow
    assert rule.done([narrow, wide], 5, 100) == "budget"
    assert rule.done([wide], 50, 0) == "max_rounds"


def test_ratio_is_none_when_a_side_is_missing():
    from harness.records.stats import ratio

    assert ratio(2.0, 1.0) == 2.0 and ratio(None, 1.0) is None and ratio(1.0, 0.0) is None


def test_compare_reports_bounded_mismatches_with_indices():
    import torch

    from harness.judge.checks import MAX_REPORTED, compare_tensors

    want = torch.zeros(100)
    got = want.clone()
    got[10:30] = 1.0
    result = compare_tensors(want, got, 1e-4, 1e-4)
    assert not result.ok and result.mismatches == 20
    assert "20 of 100" in result.reason
    assert len(result.details) == MAX_REPORTED + 1 and "and 15 more" in result.details[-1]
    assert "at (10,)" in result.details[0]


def test_nan_is_never_a_wildcard_and_inf_positions_must_match():
    import torch

    from harness.judge.checks import compare_tensors

    want = torch.tensor([1.0, float("nan"), float("inf")])
    assert compare_tensors(want, want.clone(), 1e-4, 1e-4).ok
    assert not compare_tensors(want, torch.tensor([1.0, 5.0, float("inf")]), 1e-4, 1e-4).ok
    assert not compare_tensors(want, torch.tensor([float("nan"), float("nan"), float("inf")]), 1e-4, 1e-4).ok
    assert not compare_tensors(want, torch.tensor([1.0, float("nan"), -float("inf")]), 1e-4, 1e-4).ok


def test_tolerance_is_atol_plus_rtol_times_expected():
    import torch

    from harness.judge.checks import compare_tensors

    want = torch.tensor([100.0])
    assert compare_tensors(want, torch.tensor([100.0 + 0.0100]), 1e-4, 1e-4).ok
    assert not compare_tensors(want, torch.tensor([100.0 + 0.0102]), 1e-4, 1e-4).ok


def test_dtype_and_shape_mismatch_are_incorrect():
    import torch

    from harness.judge.checks import compare_tensors

    assert "dtype" in compare_tensors(torch.zeros(3), torch.zeros(3, dtype=torch.float64), 1, 1).reason
    assert "shape" in compare_tensors(torch.zeros(3), torch.zeros(4), 1, 1).reason


def test_degeneracy_probe_finds_zero_and_constant_outputs():
    import torch

    from harness.judge.checks import degeneracy

    tiny = [[torch.full((50,), 1e-6)], [torch.full((50,), -2e-6)]]
    assert "zeros" in degeneracy(tiny, [[torch.randn(50)]] * 2, 1e-4, 1e-4)
    signal = [[torch.randn(50)], [torch.randn(50)]]
    assert degeneracy(signal, [[torch.randn(50)]] * 2, 1e-4, 1e-4) == []
    constant = [[torch.full((50,), 3.0)], [torch.full((50,), 3.0)]]
    assert "constant" in degeneracy(constant, [[torch.randn(50)]] * 2, 1e-4, 1e-4)


def test_overrides_rewrite_names_and_tuple_targets_so_derived_constants_follow():
    from harness.problems.sizes import apply_overrides

    source = "a = 100\nb, c = 3, 4\nshape = (a, c)\n"
    namespace = {}
    exec(apply_overrides(source, {"a": 7, "c": 9}), namespace)
    assert namespace["shape"] == (7, 9) and namespace["b"] == 3


def test_overriding_a_missing_constant_is_a_user_error():
    from harness.errors import UserError
    from harness.problems.sizes import apply_overrides

    with pytest.raises(UserError, match="nope"):
        apply_overrides("a = 1\n", {"nope": 2})


def test_shrink_leaves_structural_constants_alone():
    from harness.problems.sizes import shrink_overrides

    overrides = shrink_overrides("batch_size = 1024\nkernel_size = 3\nstride = 2\nnum_heads = 32\ndim = 4096\n", 8)
    assert overrides == {"batch_size": 128, "dim": 512}


def test_seeds_mix_the_secret_so_public_seeds_alone_do_not_predict_them():
    from harness.problems.seeds import mixed

    assert mixed(42, 1) == mixed(42, 1)
    assert mixed(42, 1) != mixed(42, 2) and mixed(42, 1) != mixed(43, 1)
    assert 0 <= mixed(42, 1) < 2**63


def test_usage_adds_up_and_marks_estimates():
    from harness.records.usage import Usage, total

    u = total([Usage(10, 2, 5, 1, 0.5, 1), Usage(1, 0, 1, 0, 0.25, 1, estimated=True)])
    assert (u.input_tokens, u.cached_input_tokens, u.output_tokens, u.reasoning_tokens, u.calls) == (11, 2, 6, 1, 2)
    assert u.cost_usd == pytest.approx(0.75) and u.estimated
    assert Usage.from_dict(u.to_dict()) == u


def test_registry_builds_by_name_and_lists_known_names_on_error():
    from harness.errors import UserError
    from harness.registry import create, names

    assert {"reference", "inductor"} <= set(names("generator"))
    assert create("generator", "reference").trusted_baseline
    with pytest.raises(UserError, match="known generators: .*reference"):
        create("generator", "no-such-generator")


def test_run_file_survives_a_torn_last_line_and_loads_into_pandas(tmp_path):
    from harness.records.results import RunWriter, load_runs, read_run

    path = tmp_path / "run.jsonl"
    writer = RunWriter(path, header={"run_id": "r1", "provenance": {"device": "CPU x"}, "config": {"suite": "kernelbench"}})
    writer.append({"problem_id": "L1/1_A", "status": "ok", "correct": True, "speedup": 1.5})
    writer.append({"problem_id": "L1/2_B", "status": "incorrect", "correct": False, "speedup": None})
    with open(path, "a") as handle:
        handle.write('{"type": "record", "problem_id": "L1/3_C", "sta')   # a killed writer
    header, records = read_run(path)
    assert header["schema"].startswith("crucible.run/1.") and len(records) == 2
    frame = load_runs(tmp_path)
    assert list(frame["problem_id"]) == ["L1/1_A", "L1/2_B"] and set(frame["hardware"]) == {"CPU x"}


def test_bulky_fields_live_in_the_details_file_and_every_reader_puts_them_back(tmp_path):
    from harness.records.results import RunWriter, details_path, find_run_files, load_records, read_lines, read_run
    from leaderboard.data import full_record, load_frame

    path = tmp_path / "runs" / "20250101T000000Z-a_kernelbench_direct.jsonl"
    writer = RunWriter(path, header={"run_id": "r1", "provenance": {}, "config": {"suite": "kernelbench"}})
    source = "class ModelNew:\n    pass\n" * 200
    steps = [{"step": 0, "verdict": "incorrect", "feedback": "max abs error 0.5"}]
    writer.append({"problem_id": "L1/1_A", "status": "ok", "correct": True, "candidate_source": source, "transcript": steps})
    writer.append({"problem_id": "L1/2_B", "status": "rejected", "correct": False, "candidate_source": ""})
    raw = [line for line in read_lines(path) if line["type"] == "record"]
    assert "candidate_source" not in raw[0] and isinstance(raw[0]["details"], str)
    assert raw[1]["candidate_source"] == "" and "details" not in raw[1]    # nothing bulky: nothing moved
    assert len(path.read_text()) < len(source)
    assert find_run_files([tmp_path]) == [path]                              # the details file is no run file
    _, records = read_run(path)
    assert records[0]["candidate_source"] == source and records[0]["transcript"] == steps
    assert load_records([path])[0]["candidate_source"] == source
    frame = load_frame(tmp_path, cache=False).frame
    row = frame[frame["problem_id"] == "L1/1_A"].iloc[0]
    assert full_record(row["run_file"], int(row["line_index"]), "L1/1_A")["candidate_source"] == source
    details_path(path).unlink()                                              # copied without its details
    lost = read_run(path)[1][0]
    assert lost.get("details_missing") is True and "candidate_source" not in lost


def test_unknown_schema_major_version_is_refused(tmp_path):
    from harness.errors import UserError
    from harness.records.results import read_run

    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps({"type": "header", "schema": "crucible.run/2.0"}) + "\n")
    with pytest.raises(UserError, match="not supported"):
        read_run(path)


def test_second_writer_does_not_write_a_second_header(tmp_path):
    from harness.records.results import RunWriter, read_lines

    path = tmp_path / "shared.jsonl"
    RunWriter(path, header={"run_id": "a"})
    RunWriter(path, header={"run_id": "a"}).append({"problem_id": "x"})
    kinds = [line["type"] for line in read_lines(path)]
    assert kinds == ["header", "record"]


def test_floating_inputs_are_cast_but_integer_and_bool_inputs_never():
    import torch

    from harness.judge.precision import cast_value

    values = cast_value([torch.randn(2), torch.arange(3), torch.tensor([True]), 2.5], torch.float16, "cpu")
    assert [v.dtype for v in values[:3]] == [torch.float16, torch.int64, torch.bool] and values[3] == 2.5


def test_gpu_assignment_gives_each_xdist_worker_its_own_gpu():
    from harness.executors.runner import gpu_for_worker

    assert [gpu_for_worker(f"gw{i}", 4) for i in range(6)] == [0, 1, 2, 3, 0, 1]
    assert gpu_for_worker(None, 4) is None and gpu_for_worker("master", 4) is None


def test_restricted_unpickler_refuses_code_execution():
    import os
    import pickle

    from harness.judge.worker.protocol import UnsafeMessage, load_untrusted

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    with pytest.raises(UnsafeMessage):
        load_untrusted(pickle.dumps(Evil()))
    assert load_untrusted(pickle.dumps({"ok": True, "times_ms": [1.0, math.pi]}))["ok"]


def test_degeneracy_probe_finds_outputs_that_ignore_the_input():
    import torch

    from harness.judge.checks import DegeneracyProbe

    fixed = torch.randn(50)
    probe = DegeneracyProbe(1e-4, 1e-4)
    for _ in range(3):
        probe.update([fixed.clone()], [torch.randn(50)])
    assert probe.found() == ["input_independent"]
    honest = DegeneracyProbe(1e-4, 1e-4)
    for _ in range(3):
        honest.update([torch.randn(50)], [torch.randn(50)])
    assert honest.found() == []


THREAD_COUNT_PROBLEM = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 0 + torch.get_num_threads()


def get_inputs():
    return [torch.randn(4)]


def get_init_inputs():
    return []
'''


@pytest.mark.parametrize("setting, threads", [(None, 1), ("2", 2)])
def test_cpu_expected_outputs_are_computed_at_the_workers_thread_count(monkeypatch, setting, threads):
    import torch

    from harness.problems.problem import problem_from_source
    from harness.judge.reference import ReferenceEnv

    if setting is None:
        monkeypatch.delenv("CRUCIBLE_CPU_THREADS", raising=False)
    else:
        monkeypatch.setenv("CRUCIBLE_CPU_THREADS", setting)
    env = ReferenceEnv(problem_from_source(THREAD_COUNT_PROBLEM, "L1/1_Threads"), "cpu", "fp32", secret=1)
    before = torch.get_num_threads()
    (output,) = env.expected(env.make_inputs(0))
    assert output.tolist() == [float(threads)] * 4
    assert torch.get_num_threads() == before  # the judge's own count is restored


def test_a_bad_worker_thread_count_is_a_user_error_naming_the_variable(monkeypatch):
    from harness.judge.device import worker_cpu_threads
    from harness.errors import UserError

    monkeypatch.setenv("CRUCIBLE_CPU_THREADS", "zero")
    with pytest.raises(UserError, match="CRUCIBLE_CPU_THREADS 'zero'"):
        worker_cpu_threads()


def test_a_failure_on_the_judges_side_is_recorded_and_the_run_goes_on(tmp_path):
    """The reference itself fails in the judge (as a full-size problem that does not fit in GPU
    memory does): a harness_error record with the reason is on disk, and the next problem runs."""
    from harness.judge.evaluate import EvalOptions
    from harness.problems.problem import load_problem
    from harness.records.results import load_records
    from harness.executors.runner import Runner

    broken = tmp_path / "1_Broken.py"
    broken.write_text("import torch\nimport torch.nn as nn\n\nN = 8\n\n\nclass Model(nn.Module):\n"
                      "    def forward(self, x):\n        raise torch.OutOfMemoryError('CUDA out of memory. Tried to allocate 12.00 GiB')\n\n\n"
                      "def get_inputs():\n    return [torch.randn(N, N)]\n\n\ndef get_init_inputs():\n    return []\n")
    runner = Runner("reference", EvalOptions(timing=False, trials=2), runs_dir=tmp_path / "runs", log=lambda _: None)
    [failed] = runner.run_problem(load_problem(broken, size="full", level=1))
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "problems" / "1_Scale_ReLU.py"
    [fine] = runner.run_problem(load_problem(fixture, size="small", level=1))
    assert failed["status"] == "harness_error" and failed["correct"] is False
    assert "judge ran out of memory" in failed["reason"] and "OutOfMemoryError" in failed["traceback"]
    assert fine["status"] == "ok"
    assert [r["status"] for r in load_records([tmp_path / "runs"])] == ["harness_error", "ok"]


def test_chunked_comparison_gives_the_same_verdict_and_report_as_one_piece(monkeypatch):
    """Comparisons and fingerprints go a chunk at a time (bounded GPU memory): the chunk size must
    change nothing, neither the verdict, the count, the first indices reported, nor the errors."""
    import torch

    from harness.judge import checks
    from harness.judge.worker import handlers

    torch.manual_seed(3)
    want = torch.randn(7, 11, 13)
    got = want.clone()
    got[0, 0, 5] += 1.0
    got[3, 10, 12] = 0.0
    got[6, 2, 1] += 1e-3
    whole = checks.compare_tensors(want, got, 1e-4, 1e-4)
    nan = want.clone()
    nan[5, 5, 5] = float("nan")
    whole_nan = checks.compare_tensors(want, nan, 1e-4, 1e-4)
    prints = [handlers.fingerprint(t) for t in (want, want.transpose(0, 2), want[:, 3])]
    monkeypatch.setattr(checks, "CHUNK_ELEMENTS", 17)
    chunked = checks.compare_tensors(want, got, 1e-4, 1e-4)
    assert (chunked.ok, chunked.reason, chunked.details, chunked.mismatches) == \
        (whole.ok, whole.reason, whole.details, whole.mismatches)
    assert chunked.max_abs_err == whole.max_abs_err and chunked.mismatches == 3
    assert checks.compare_tensors(want, nan, 1e-4, 1e-4).reason == whole_nan.reason
    assert "NaN/Inf positions differ: 1 of" in whole_nan.reason
    assert checks.matches_constant(torch.zeros(100), 0.0, 1e-4, 1e-4)
    assert not checks.matches_constant(want, 0.0, 1e-4, 1e-4)
    small = [handlers.fingerprint(t, _chunk=17) for t in (want, want.transpose(0, 2), want[:, 3])]
    assert all(abs(a - b) <= 1e-9 * max(1.0, abs(a)) for a, b in zip(prints, small))
