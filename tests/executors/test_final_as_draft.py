"""A candidate its generator already judged as a draft, unchanged, is not judged a second time where
that judgement would be the same (the CPU, Triton in the interpreter: never timed); anything that
would be timed, or a draft that failed, is judged again."""

from __future__ import annotations

from harness.executors.runner import Runner, _final_as_judged
from harness.judge.evaluate import SPEED_NOT_MEASURED_CPU, EvalOptions
from harness.problems.problem import load_problem
from harness.problems.suite import problem_files


def _problem(pattern: str):
    (level, path), = problem_files(patterns=[pattern])
    return load_problem(path, size="small", level=level)


def test_mkevolve_s_checked_composition_is_its_final_verdict(tmp_path):
    runner = Runner("mkevolve", EvalOptions(device="cpu"), runs_dir=tmp_path, log=lambda *_: None)
    record, = runner.run_problem(_problem("L2/12_*"))
    assert record["status"] == "ok" and record["generator"] == "mkevolve" and record["attempt"] == 0
    assert record["judged_as_draft"] is True
    assert SPEED_NOT_MEASURED_CPU in record["remarks"]
    assert record["candidate_source"].startswith("# Composed by Crucible's mkevolve generator")
    checks = record["provenance"]["composition"]["checks"]
    assert checks[-1]["status"] == "ok", "the reused verdict is the composition's end-to-end check"


def test_what_would_be_timed_or_failed_is_judged_again():
    cpu, cuda = EvalOptions(device="cpu"), EvalOptions(device="cuda")
    triton_ok = {"status": "ok", "triton_launches": 3}
    assert _final_as_judged(triton_ok, cpu)
    assert not _final_as_judged(triton_ok, cuda), "a GPU candidate is timed in its final judgement"
    assert not _final_as_judged({"status": "ok", "triton_launches": 0}, cpu), "PyTorch code is timed on the CPU"
    assert not _final_as_judged({"status": "timeout", "triton_launches": 3}, cpu), "a failure is judged again"


def test_a_generator_without_drafts_is_judged_as_ever(tmp_path):
    runner = Runner("reference", EvalOptions(device="cpu"), runs_dir=tmp_path, log=lambda *_: None)
    record, = runner.run_problem(_problem("L1/19_*"))
    assert record["status"] == "ok" and "judged_as_draft" not in record
