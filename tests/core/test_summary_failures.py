"""The run summary tells "the generator wrote nothing" from "it wrote something wrong"."""

from __future__ import annotations

from harness.candidate import Candidate
from harness.records.progress import failure_split, summary_lines


def record(problem: str, status: str, source: str, level: int = 1) -> dict:
    return {"problem_id": problem, "level": level, "status": status, "correct": status == "ok",
            "candidate_sha": Candidate(source).sha, "flags": [], "speedup": 1.0 if status == "ok" else None}


def test_empty_sources_count_as_wrote_nothing_and_the_rest_by_status():
    records = [record("L1/1", "rejected", ""), record("L1/2", "incorrect", "class ModelNew: ..."),
               record("L1/3", "compile_error", "def broken("), record("L1/4", "ok", "class ModelNew: ...")]
    assert failure_split(records) == ("generator wrote nothing 1; wrote something wrong 2 "
                                      "(compile_error 1, incorrect 1)")
    lines = summary_lines(records)
    assert lines[0].startswith("L1: 1/4 correct") and lines[1].strip().startswith("not correct: generator wrote nothing 1")


def test_a_problem_with_a_written_attempt_counts_as_written_and_all_correct_prints_no_split():
    records = [record("L2/5", "rejected", "", 2), record("L2/5", "incorrect", "x = 1", 2)]
    assert failure_split(records) == "generator wrote nothing 0; wrote something wrong 1 (incorrect 1)"
    assert failure_split([record("L2/6", "ok", "x = 1", 2)]) == ""
    assert len(summary_lines([record("L2/6", "ok", "x = 1", 2)])) == 1
