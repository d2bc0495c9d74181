"""Loading that never loses good records: each bad line or file is a warning naming it, every good
record is kept, and drill-down line numbers stay right after the bad lines."""

import json
import warnings
from pathlib import Path

import pytest

from harness.records.results import RunFileWarning, RunWriter, load_records, load_runs
from leaderboard import data
from leaderboard_fixtures import L1, build_results, header, record

GOOD = 46  # records in the shared fixture


def run_file(tmp_path: Path, name: str = "20250105T000000Z-x_kernelbench_extra.jsonl") -> tuple[Path, RunWriter]:
    path = tmp_path / "runs" / name
    return path, RunWriter(path, header("extra", "run-extra"))


def insert_line(path: Path, raw: bytes, after_records: int = 1) -> int:
    """Put ``raw`` after the header and the first ``after_records`` records; returns its line number."""
    lines = path.read_bytes().split(b"\n")
    at = 1 + after_records
    path.write_bytes(b"\n".join(lines[:at] + [raw] + lines[at:]))
    return at + 1


BAD_LINES = {
    "non-UTF-8": (b'{"type": "record", "problem_id": "L1/x", "reason": "\xff\xfe"}', "not UTF-8"),
    "not an object": (b"[1, 2, 3]", "not an object"),
    "torn in mid-file": (b'{"type": "record", "problem_id": "L1/t', "not valid JSON"),
}


@pytest.mark.parametrize("case", list(BAD_LINES))
def test_a_bad_line_is_a_warning_with_file_and_line_and_the_rest_is_kept(tmp_path, case):
    build_results(tmp_path, megakernel=False)
    path, writer = run_file(tmp_path)
    for problem in L1[:3]:
        writer.append(record(problem, "extra", speedup=1.5))
    raw, why = BAD_LINES[case]
    line = insert_line(path, raw)
    loaded = data.load_frame(tmp_path, cache=False)
    assert len(loaded.frame) == GOOD + 3
    assert [w for w in loaded.warnings if f"{path}:{line}:" in w and why.split()[0] in w], loaded.warnings
    with pytest.warns(RunFileWarning, match=f":{line}:"):
        frame = load_runs(tmp_path / "runs")
    assert len(frame) == GOOD + 3
    with pytest.warns(RunFileWarning, match=f":{line}:"):
        assert len(load_records([tmp_path / "runs"])) == GOOD + 3


def test_drill_down_finds_the_right_record_after_a_torn_line(tmp_path):
    path, writer = run_file(tmp_path)
    for problem in L1:
        writer.append(record(problem, "extra", speedup=1.5))
    insert_line(path, BAD_LINES["torn in mid-file"][0], after_records=1)
    frame = data.load_frame(tmp_path, cache=False).frame
    assert list(frame["problem_id"]) == L1
    for row in frame.itertuples():
        full = data.full_record(row.run_file, int(row.line_index), row.problem_id)
        assert full["problem_id"] == row.problem_id and f"extra {row.problem_id}" in full["candidate_source"]


@pytest.mark.parametrize("content, why", [
    (json.dumps({"type": "header", "schema": "crucible.run/9.0"}) + "\n", "crucible.run/9.0"),
    ("this is not a run file\n", "not a run header"),
    ("", "empty file"),
])
def test_an_unreadable_file_is_a_warning_and_the_other_files_are_kept(tmp_path, content, why):
    build_results(tmp_path, megakernel=False)
    bad = tmp_path / "runs" / "20990101T000000Z-z_kernelbench_future.jsonl"
    bad.write_text(content)
    loaded = data.load_frame(tmp_path, cache=False)
    assert len(loaded.frame) == GOOD
    assert len(loaded.warnings) == 1 and why in loaded.warnings[0] and str(bad) in loaded.warnings[0]
    with pytest.warns(RunFileWarning, match="future"):
        assert len(load_runs(tmp_path / "runs")) == GOOD
    with pytest.warns(RunFileWarning, match="future"):
        assert len(load_records([tmp_path / "runs"])) == GOOD


def test_cached_columns_keep_reporting_the_bad_lines(tmp_path, monkeypatch):
    monkeypatch.setenv("CRUCIBLE_CACHE", str(tmp_path / "cache"))
    path, writer = run_file(tmp_path)
    writer.append(record(L1[0], "extra", speedup=1.5))
    insert_line(path, b"[1]", after_records=0)
    first = data.load_frame(tmp_path).warnings
    again = data.load_frame(tmp_path).warnings
    assert first == again and len(again) == 1


def test_load_runs_takes_a_list_of_files_and_folders_as_documented(results_dir):
    runs = sorted((results_dir / "runs").glob("*.jsonl"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        listed = load_runs([str(runs[0]), runs[1]])
        spread = load_runs(runs[0], runs[1])
        folder = load_runs([results_dir / "runs"])
    assert len(listed) == len(spread) and set(listed["run_file"]) == {str(runs[0]), str(runs[1])}
    assert len(folder) == GOOD


def test_load_runs_with_details_gives_whole_records(results_dir):
    frame = load_runs(results_dir / "runs", details=True)
    assert len(frame) == GOOD and frame["candidate_source"].str.contains("class ModelNew").all()


def test_the_app_reports_bad_lines_and_shows_every_good_record(monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    build_results(tmp_path, megakernel=False)
    path, writer = run_file(tmp_path)
    writer.append(record(L1[0], "extra", speedup=1.5))
    line = insert_line(path, BAD_LINES["non-UTF-8"][0], after_records=0)
    monkeypatch.setenv("CRUCIBLE_RESULTS", str(tmp_path))
    app = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "leaderboard" / "app.py"),
                            default_timeout=120).run()
    assert not app.exception
    assert any(f"{path}:{line}: not UTF-8" in w.value for w in app.warning)
    assert app.caption[0].value.startswith(f"{GOOD + 1:,} records")
