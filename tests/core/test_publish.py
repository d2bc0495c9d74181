"""`python -m harness publish`: the one way a run reaches results/."""

import json

import pytest

from harness.cli import main


def _run_file(folder, run_id="20260101T000000Z-abcdef", records=1):
    from harness.records.results import RunWriter, run_file_name

    path = folder / run_file_name(run_id, "kernelbench", "reference")
    writer = RunWriter(path, header={"run_id": run_id, "provenance": {}, "config": {}})
    for index in range(records):
        writer.append({"run_id": run_id, "problem_id": f"L1/{index}_X", "candidate_source": "x = 1"})
    return path


def test_a_run_file_and_its_details_file_are_copied_into_results_runs(tmp_path, capsys):
    run = _run_file(tmp_path / "runs")
    assert main(["publish", str(run), "--results", str(tmp_path / "results")]) == 0
    published = tmp_path / "results" / "runs" / run.name
    assert published.read_bytes() == run.read_bytes()
    assert (published.parent / run.name.replace(".jsonl", ".details.ndjson")).is_file()
    assert main(["publish", str(run), "--results", str(tmp_path / "results")]) == 0
    assert "already published" in capsys.readouterr().out


def test_a_different_file_under_a_published_name_is_refused(tmp_path, capsys):
    run = _run_file(tmp_path / "runs")
    main(["publish", str(run), "--results", str(tmp_path / "results")])
    with open(run, "a") as handle:
        handle.write(json.dumps({"type": "record", "run_id": "x", "problem_id": "L1/9_Y"}) + "\n")
    assert main(["publish", str(run), "--results", str(tmp_path / "results")]) == 2
    assert "exists with other content" in capsys.readouterr().err


@pytest.mark.parametrize("content, message", [("not json at all\n", "no header line"),
                                              ('{"schema": "other/1"}', "not a run file")])
def test_a_file_that_is_not_a_run_is_refused_with_the_reason(tmp_path, capsys, content, message):
    path = tmp_path / ("x.jsonl" if "header" in message else "x.json")
    path.write_text(content)
    assert main(["publish", str(path), "--results", str(tmp_path / "results")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


def test_a_megakernel_summary_becomes_the_published_summary(tmp_path):
    summary = tmp_path / "megakernel_summary.json"
    summary.write_text(json.dumps({"schema": "crucible.megakernel.summary/1.0", "run_id": "r"}))
    assert main(["publish", str(summary), "--results", str(tmp_path / "results")]) == 0
    assert (tmp_path / "results" / "megakernel" / "summary.json").read_text() == summary.read_text()
