"""--resume: a later run appends to an earlier run's file, skips what it recorded, says who it is,
and refuses to mix machines or settings in one file."""

import json

import pytest

from harness.errors import UserError
from harness.judge.evaluate import EvalOptions
from harness.records.results import RunWriter, completed_keys, load_records, resume_conflicts, run_segments
from harness.executors.runner import Runner


def _header(run_id, device="NVIDIA H200", commit="aaa", size="full", precision="fp32"):
    return {"run_id": run_id, "provenance": {"device": device, "git_commit": commit},
            "config": {"suite": "kernelbench", "generator": "reference", "size": size, "precision": precision,
                       "device": "cuda"}}


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_resumed_run_appends_one_resume_line_with_its_own_provenance(tmp_path):
    path = tmp_path / "run.jsonl"
    RunWriter(path, _header("first", commit="aaa")).append({"problem_id": "L1/1_x", "generator": "reference"})
    for _ in range(2):  # two xdist workers of the resuming run: one line between them
        RunWriter(path, _header("second", commit="bbb")).append(
            {"problem_id": "L1/2_y", "generator": "reference", "run_id": "second"})
    kinds = [line["type"] for line in _lines(path)]
    assert kinds == ["header", "record", "resume", "record", "record"]
    segments = run_segments(path)
    assert list(segments) == ["first", "second"]
    assert segments["second"]["provenance"]["git_commit"] == "bbb"


def test_load_records_gives_each_record_the_commit_of_the_run_that_wrote_it(tmp_path):
    path = tmp_path / "run.jsonl"
    RunWriter(path, _header("first", commit="aaa")).append({"problem_id": "L1/1_x", "generator": "reference"})
    RunWriter(path, _header("second", commit="bbb")).append(
        {"problem_id": "L1/2_y", "generator": "reference", "run_id": "second"})
    rows = {r["problem_id"]: r for r in load_records([path])}
    assert rows["L1/1_x"]["run_commit"] == "aaa" and rows["L1/1_x"]["run_id"] == "first"
    assert rows["L1/2_y"]["run_commit"] == "bbb"
    assert {r["hardware"] for r in rows.values()} == {"NVIDIA H200"}
    assert completed_keys(path) == {("L1/1_x", "reference", 0), ("L1/2_y", "reference", 0)}


def test_a_file_being_created_by_another_worker_gets_no_resume_line(tmp_path):
    path = tmp_path / "run.jsonl"
    path.touch()  # the creating worker has opened the file but not yet written its header
    RunWriter(path, _header("same"))
    assert path.read_text() == ""


@pytest.mark.parametrize("change, what", [
    ({"device": "NVIDIA H100 80GB HBM3"}, "machine"),
    ({"size": "small"}, "size"),
    ({"precision": "bf16"}, "precision"),
])
def test_resume_conflicts_name_what_differs(change, what):
    conflicts = resume_conflicts(_header("a"), _header("b", **change))
    assert len(conflicts) == 1 and conflicts[0].startswith(what)


def test_resume_conflicts_ignore_the_commit_and_keys_one_side_lacks():
    old = _header("a", commit="aaa")
    del old["config"]["precision"]
    assert resume_conflicts(old, _header("b", commit="bbb", precision="bf16")) == []


def test_runner_refuses_to_resume_a_run_of_other_settings_and_says_what_to_do(tmp_path):
    path = tmp_path / "20260101T000000Z-aaaaaa_kernelbench_reference.jsonl"
    header = _header("old", device="cpu-of-another-kind", size="full")
    header["config"]["device"] = "cpu"
    RunWriter(path, header)
    with pytest.raises(UserError, match="--resume would append.*size: the file has 'full', this run 'small'"):
        Runner("reference", EvalOptions(device="cpu", size="small"), tmp_path, resume=True, log=lambda _: None)
    assert [line["type"] for line in _lines(path)] == ["header"]  # nothing appended


def test_runner_resumes_a_run_of_the_same_settings_and_skips_its_problems(tmp_path, scale_relu):
    first = Runner("reference", EvalOptions(device="cpu", size="small"), tmp_path, log=lambda _: None)
    first.writer.append({"problem_id": scale_relu.id, "generator": "reference", "attempt": 0, "run_id": first.run_id})
    second = Runner("reference", EvalOptions(device="cpu", size="small"), tmp_path, resume=True, log=lambda _: None)
    assert second.path == first.path and second.run_id != first.run_id
    assert second.already_done(scale_relu)
    assert [line["type"] for line in _lines(first.path)] == ["header", "record", "resume"]


def test_the_compile_baseline_gets_a_first_call_limit_for_whole_networks():
    from harness.judge.baseline_workers import COMPILE_FIRST_CALL_S, baseline_options

    opts = EvalOptions()
    longer = baseline_options(opts, "compile")
    assert baseline_options(opts, "eager") is opts
    assert longer.limits.first_call_s == COMPILE_FIRST_CALL_S > opts.limits.first_call_s
    assert opts.limits.first_call_s == 120.0  # the candidates' limit is untouched
