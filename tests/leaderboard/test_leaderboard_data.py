"""The leaderboard's data layer: run files to a light frame, and back to full records."""

import json

import pytest

from harness.records import run_table
from harness.errors import UserError
from harness.records.results import RunWriter
from leaderboard import data

from leaderboard_fixtures import L1, L2, H200, build_results, header, record


def test_every_record_is_loaded_with_its_header_facts(results_dir):
    loaded = data.load_frame(results_dir)
    frame = loaded.frame
    assert loaded.files == 5 and not loaded.warnings
    assert len(frame) == 7 + 21 + 7 + 7 + 4
    assert set(frame["hardware"]) == {H200}
    assert frame["run_file"].str.endswith(".jsonl").all()


def test_heavy_fields_are_left_out_of_the_frame(results_dir):
    frame = data.load_frame(results_dir).frame
    assert not {"candidate_source", "transcript", "provenance"} & set(frame.columns)


def test_imported_header_marks_every_record_imported_and_unranked(results_dir):
    frame = data.load_frame(results_dir).frame
    imported = frame[frame["generator"] == "upstream-published"]
    assert imported["imported"].all() and not imported["ranked"].any()
    assert not frame.loc[frame["generator"] == "inductor", "imported"].any()


def test_flagged_records_are_marked_and_not_ranked(results_dir):
    frame = data.load_frame(results_dir).frame
    flagged = frame[frame["flagged"]]
    assert list(flagged["problem_id"]) == [L1[0]] and list(flagged["generator"]) == ["kforge"]
    assert not flagged["ranked"].any()


def test_usage_is_flattened_into_columns(results_dir):
    frame = data.load_frame(results_dir).frame
    direct = frame[frame["generator"] == "direct"]
    assert (direct["tokens"] == 1500).all() and direct["cost_usd"].sum() == pytest.approx(0.21)
    assert frame.loc[frame["generator"] == "inductor", "tokens"].isna().all()


def test_full_record_reads_source_and_transcript_back(results_dir):
    frame = data.load_frame(results_dir).frame
    row = frame[(frame["generator"] == "kforge") & (frame["problem_id"] == L2[0])].iloc[0]
    full = data.full_record(row["run_file"], int(row["line_index"]), row["problem_id"])
    assert "class ModelNew" in full["candidate_source"]
    assert [step["step"] for step in full["transcript"]] == [0, 1, 2, 3]


def test_full_record_refuses_a_mismatched_line(results_dir):
    frame = data.load_frame(results_dir).frame
    row = frame.iloc[0]
    with pytest.raises(UserError, match="not found"):
        data.full_record(row["run_file"], int(row["line_index"]), "L9/none")


def test_tolerant_reader_gives_the_same_frame_as_arrow(results_dir, monkeypatch):
    fast = data.load_frame(results_dir).frame

    def refuse(data_bytes):
        raise ValueError("pretend pyarrow cannot read this")

    monkeypatch.setattr(run_table, "_read_pyarrow", refuse)
    slow = data.load_frame(results_dir).frame
    columns = ["problem_id", "generator", "level", "attempt", "correct", "speedup", "tokens", "flagged", "imported"]
    assert fast[columns].equals(slow[columns])


def test_torn_last_line_and_odd_types_fall_back_without_losing_records(tmp_path):
    path = tmp_path / "runs" / "20250101T000000Z-x_kernelbench_odd.jsonl"
    writer = RunWriter(path, header("odd", "run-odd"))
    writer.append(record(L1[0], "odd", speedup=2.0))
    writer.append({**record(L1[1], "odd", speedup=1.5), "level": "1", "flags": "timer_mismatch"})
    with open(path, "a") as handle:
        handle.write('{"type": "record", "problem_id": "L1/torn", "gen')  # a killed writer
    frame = data.load_frame(tmp_path).frame
    assert list(frame["problem_id"]) == [L1[0], L1[1]]
    assert list(frame["level"]) == [1, 1]
    assert list(frame["flagged"]) == [False, True]


def test_unknown_schema_becomes_a_warning_not_a_crash(tmp_path):
    build_results(tmp_path, megakernel=False)
    bad = tmp_path / "runs" / "20990101T000000Z-z_kernelbench_future.jsonl"
    bad.write_text(json.dumps({"type": "header", "schema": "crucible.run/9.0"}) + "\n")
    loaded = data.load_frame(tmp_path)
    assert len(loaded.warnings) == 1 and "crucible.run/9.0" in loaded.warnings[0]
    assert len(loaded.frame) == 46


def test_missing_results_folder_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no such results folder"):
        data.load_frame(tmp_path / "absent")


def test_empty_results_folder_gives_an_empty_frame(tmp_path):
    (tmp_path / "runs").mkdir()
    loaded = data.load_frame(tmp_path)
    assert loaded.frame.empty and loaded.files == 0


def test_megakernel_summary_is_optional(tmp_path, results_dir):
    assert data.load_megakernel_summary(results_dir)["confusion"]["tp"] == 40
    assert data.load_megakernel_summary(tmp_path) is None


def test_megakernel_view_reads_the_suite_summary_layout():
    summary = {
        "confusion": {"all": {"true_reject": 8, "true_accept": 5, "false_reject": 1, "false_accept": 0, "n": 14},
                      "sampled": {"true_reject": 1, "true_accept": 0, "false_reject": 0, "false_accept": 0}},
        "per_class": [{"class": "cycle", "n": 4, "rejected": 4, "false_accept": 0},
                      {"class": "safe", "n": 10, "rejected": 1, "false_reject": 1}],
        "search": {"trajectory": [{"makespan_us": 9.0, "status": "kept"}, {"makespan_us": 5.0, "status": "rejected"},
                                  {"makespan_us": 7.0, "status": "kept"}]},
    }
    view = data.megakernel_view(summary)
    assert view["confusion"] == {"tp": 8, "tn": 5, "fp": 1, "fn": 0}
    assert view["per_class"]["safe"] == {"total": 10, "rejected": 1, "accepted": 9, "false_accept": 0,
                                         "false_reject": 1}
    assert [row["best_cost"] for row in view["search_trajectory"]] == [9.0, 9.0, 7.0]  # rejected never best


def test_megakernel_view_leaves_out_what_the_summary_lacks():
    assert data.megakernel_view({"confusion": {"tp": 1}}) == {}
    assert data.megakernel_view(None) == {}


def test_cached_columns_are_reused_until_a_run_file_grows(tmp_path, monkeypatch):
    monkeypatch.setenv("CRUCIBLE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "runs" / "20250101T000000Z-c_kernelbench_cached.jsonl"
    writer = RunWriter(path, header("cached", "run-cached"))
    writer.append(record(L1[0], "cached", speedup=2.0))
    first = data.load_frame(tmp_path).frame
    assert len(list((tmp_path / "cache" / "leaderboard").glob("*.arrow"))) == 1

    def refuse(path, warnings):
        raise AssertionError("the cached columns should have been used")

    monkeypatch.setattr(run_table, "file_table", refuse)
    assert data.load_frame(tmp_path).frame.equals(first)
    monkeypatch.undo()
    monkeypatch.setenv("CRUCIBLE_CACHE", str(tmp_path / "cache"))
    writer.append(record(L1[1], "cached", speedup=1.5))  # the run goes on: the entry is stale
    assert list(data.load_frame(tmp_path).frame["problem_id"]) == [L1[0], L1[1]]


def test_cache_can_be_bypassed(tmp_path, monkeypatch):
    monkeypatch.setenv("CRUCIBLE_CACHE", str(tmp_path / "cache"))
    build_results(tmp_path / "results", megakernel=False)
    data.load_frame(tmp_path / "results", cache=False)
    assert not (tmp_path / "cache" / "leaderboard").exists() or not any((tmp_path / "cache" / "leaderboard").iterdir())
