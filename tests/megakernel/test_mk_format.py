"""The JSON format, AutoMegaKernel IR 0.2 import/export, records and the CLI."""

import argparse
import json
from pathlib import Path

from mk_schedules import two_tile_join

from harness.megakernel import cli, records
from harness.megakernel.amk_io import dumps, from_amk, normalise, to_amk
from harness.megakernel.configs import PRESETS, ScheduleConfig
from harness.megakernel.lowering import lower
from harness.megakernel.validator import validate
from harness.records.results import read_run


def test_amk_round_trip_is_exact_including_regions_and_pages():
    doc = lower(PRESETS["small"], ScheduleConfig(num_sms=3, gemv_tile=4, paging="graph_color"), pos=2)
    amk = json.loads(json.dumps(to_amk(doc)))
    assert amk["ir_version"] == "0.2.0" and set(amk) >= {"meta", "target", "buffers", "counters", "tasks", "pages", "config"}
    assert all(set(t) == {"id", "op", "inputs", "outputs", "out_counter", "waits", "params", "sm", "est_bytes",
                          "est_flops", "label"} for t in amk["tasks"])
    back = from_amk(amk)
    assert back.pop("ops") == "amk" and back.pop("queues") == "amk_loader" and back.pop("amk")["ir_version"] == "0.2.0"
    assert json.dumps(back, sort_keys=True) == json.dumps(doc, sort_keys=True)
    assert dumps(to_amk(from_amk(amk))) == dumps(amk)


def test_amk_import_derives_tile_regions_and_places_unassigned_sms_as_the_loader_does():
    amk = to_amk(two_tile_join())
    amk["meta"].pop("crucible_regions")
    for task in amk["tasks"][:2]:
        task.update(op="GEMV_TILE", params={"K": 4, "N_tile": 2, "n_off": 2 * task["id"]})
    doc = normalise(amk)
    doc.pop("ops")  # the hand-built join's third op is not one of AMK's
    assert doc["tasks"][1]["regions"] == [{"buffer": 1, "box": [[0, 1], [2, 4]]}] and validate(doc).ok
    amk["tasks"][0]["sm"] = None
    doc = normalise(amk)
    doc.pop("ops")
    verdict = validate(doc)
    assert verdict.ok and verdict.safety == "safe_any_placement", verdict.report()


def _cli(*argv) -> int:
    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers(dest="command"))
    return cli.run(parser.parse_args(["schedules", *argv]))


def test_cli_check_prints_the_verdict_and_witness_with_exit_codes(tmp_path, capsys):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(two_tile_join()))
    bad.write_text(json.dumps(two_tile_join(threshold=1)))
    assert _cli("--check", str(good)) == 0 and "ACCEPTED" in capsys.readouterr().out
    assert _cli("--check", str(bad), "--json") == 1
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["verdict"] == "rejected" and out["classes"] == ["first_k_of_n"] and out["witness_trace"] == [0]
    assert _cli("--check", str(tmp_path / "missing.json")) == 2


def test_cli_lower_writes_a_schedule_or_an_amk_document(tmp_path):
    out = tmp_path / "s.json"
    assert _cli("--lower", "tiny", "--position", "2", "--out", str(out)) == 0
    assert json.loads(out.read_text())["meta"]["position"] == 2
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"model": "tiny", "schedule": {"num_sms": 2, "gemv_tile": 4}, "position": 1}))
    assert _cli("--lower", str(spec), "--amk", "--out", str(out)) == 0
    assert json.loads(out.read_text())["ir_version"] == "0.2.0"


def test_run_file_and_summary_are_readable_without_the_writer(tmp_path):
    summary = records.new_summary()
    summary["per_class"] = [{"class": "random", "n": 2, "true_reject": 1, "true_accept": 1, "false_reject": 0,
                             "false_accept": 0}]
    summary["confusion"] = {"all": {"true_reject": 1, "true_accept": 1, "false_reject": 0, "false_accept": 0, "n": 2}}
    path = records.write_run(summary, tmp_path)
    header, rows = read_run(path)
    assert header["config"]["suite"] == "megakernel"
    assert [r["problem_id"] for r in rows] == ["MK/corpus/random", "MK/summary"] and all(r["suite"] == "megakernel" for r in rows)
    written = records.write_summary(summary, tmp_path / "mk" / "summary.json")
    assert json.loads(written.read_text())["schema"] == records.SUMMARY_SCHEMA


def test_cli_check_tells_bad_input_exit_2_from_an_unsafe_schedule_exit_1(tmp_path, capsys):
    sample = Path(__file__).parent / "fixtures" / "amk_samples" / "mutant_drop_wait_0020.json"
    text = sample.read_text()
    cases = {"empty.json": ("", "empty"), "blank.json": ("  \n", "empty"),
             "truncated.json": (text[:5000], "(truncated?)"),
             "cut.json": ('{"tasks": [1, 2,', "Expecting value (line 1, column 17); the file ends before"),
             "invalid.json": ('{\n  "tasks": [1, 2,,]\n}', "Expecting value (line 2, column 18); fix the file"),
             "list.json": ("[1, 2]", "JSON object, the file holds a JSON list")}
    for name, (body, words) in cases.items():
        path = tmp_path / name
        path.write_text(body)
        assert _cli("--check", str(path)) == 2, name
        err = capsys.readouterr().err
        assert words in err and str(path) in err, (name, err)
    unsafe = tmp_path / "unsafe.json"
    unsafe.write_text(text)
    assert _cli("--check", str(unsafe)) == 1
    out = capsys.readouterr().out
    assert "REJECTED" in out and "[race/raw]" in out and "witness:" in out and "it can happen right at launch" in out
