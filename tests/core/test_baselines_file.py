"""python -m harness.records.baselines: one entry per problem from reference runs, the latest value of each
field winning, with the timer and a reference speedup outside 0.9-1.1 named as unsettled."""

import json

from harness.records import baselines
from harness.records.results import RunWriter


def _record(pid, level, **fields):
    return {"type": "record", "problem_id": pid, "level": level, "generator": "reference", "suite": "kernelbench",
            "status": "ok", "correct": True, "flags": [], "remarks": [], **fields}


def test_baseline_file_takes_latest_fields_and_names_unsettled_problems(tmp_path, capsys):
    old = RunWriter(tmp_path / "a_kernelbench_reference.jsonl",
                    {"run_id": "a", "config": {"suite": "kernelbench", "timer": "cuda_events+device_sync"}})
    old.append(_record("L3/7_Net", 3, eager_ms=4.0, compile_ms=None, speedup=1.2))
    old.append(_record("L1/1_Mm", 1, eager_ms=2.0, compile_ms=1.0, speedup=1.0))
    new = RunWriter(tmp_path / "b_kernelbench_reference.jsonl",
                    {"run_id": "b", "config": {"suite": "kernelbench", "timer": "cuda_events+device_sync-round_trip_floor"}})
    new.append(_record("L3/7_Net", 3, eager_ms=3.0, compile_ms=2.0, speedup=1.01))
    out = tmp_path / "base.json"
    assert baselines.main(["--runs", str(tmp_path), "--out", str(out)]) == 0
    problems = json.loads(out.read_text())["problems"]
    assert problems["L3/7_Net"]["eager_ms"] == 3.0 and problems["L3/7_Net"]["compile_ms"] == 2.0
    assert problems["L3/7_Net"]["timer"] == "cuda_events+device_sync-round_trip_floor"
    assert problems["L1/1_Mm"]["timer"] == "cuda_events+device_sync"
    printed = capsys.readouterr().out
    assert "not settled" not in printed  # L3/7's 1.2 was measured again at 1.01

    later = RunWriter(tmp_path / "c_kernelbench_reference.jsonl", {"run_id": "c", "config": {"suite": "kernelbench"}})
    later.append(_record("L1/2_Mm", 1, eager_ms=5.0, speedup=0.44))
    baselines.main(["--runs", str(tmp_path), "--out", str(out)])
    printed = capsys.readouterr().out
    assert "not settled): L1/2_Mm 0.440" in printed
    assert printed.splitlines()[1].endswith("| 1")  # L1: one of two problems unsettled


def test_a_failed_compile_baseline_keeps_its_reason_until_a_run_measures_it(tmp_path, capsys):
    reason = "incorrect: trial 0: output: values differ beyond atol=0.0001"
    run = RunWriter(tmp_path / "a_kernelbench_reference.jsonl",
                    {"run_id": "a", "config": {"suite": "kernelbench", "timer": "cuda_events+device_sync"}})
    run.append(_record("L3/45_UNet", 3, eager_ms=14.0, speedup=1.0, remarks=[f"compile_baseline_failed: {reason}"]))
    run.append(_record("L3/7_Net", 3, eager_ms=3.0, speedup=1.0, remarks=["compile_baseline_failed: timeout"]))
    run.append(_record("L3/7_Net", 3, eager_ms=3.1, compile_ms=2.5, speedup=1.0))
    out = tmp_path / "base.json"
    baselines.main(["--runs", str(tmp_path), "--out", str(out)])
    problems = json.loads(out.read_text())["problems"]
    assert problems["L3/45_UNet"]["compile_failed"] == reason and "compile_ms" not in problems["L3/45_UNet"]
    assert "compile_failed" not in problems["L3/7_Net"] and problems["L3/7_Net"]["compile_ms"] == 2.5
    printed = capsys.readouterr().out
    assert "compile baseline failed: L3/45_UNet (incorrect: trial 0" in printed and "L3/7_Net (" not in printed
    assert "eager medians by CUDA timer: cuda_events+device_sync 2" in printed
