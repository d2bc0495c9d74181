"""AutoMegaKernel-written schedules (tests/megakernel/fixtures/amk_samples, as AMK emits them:
``"sm": null``, placed by AMK's loader): import, verdicts against the exact oracle, round trip."""

import json
from pathlib import Path

import pytest

from harness.megakernel import oracle
from harness.megakernel.amk_io import dumps, from_amk, normalise, to_amk
from harness.megakernel.loader_check import placed_document
from harness.megakernel.validator import validate

SAMPLES = Path(__file__).parent / "fixtures" / "amk_samples"
FILES = sorted(SAMPLES.glob("*.json"))
# the oracle explores every interleaving below this many tasks and samples above it
_SAMPLED_RUNS = 4


def _doc(path: Path) -> dict:
    return normalise(json.loads(path.read_text()))


def test_the_twelve_samples_are_present():
    assert len(FILES) == 12, f"expected the twelve AMK samples in {SAMPLES}"


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("valid")], ids=lambda p: p.stem)
def test_every_valid_amk_lowering_is_accepted_under_any_placement(path):
    verdict = validate(_doc(path))
    assert verdict.ok and verdict.safety == "safe_any_placement", verdict.report()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_import_then_export_gives_back_amks_bytes(path):
    text = path.read_text()
    assert dumps(to_amk(from_amk(json.loads(text)))) == text


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_sample_verdict_equals_the_oracles(path):
    doc = _doc(path)
    verdict = validate(doc)
    truth = oracle.label(doc, runs=_SAMPLED_RUNS)
    assert verdict.ok == truth["safe"], (verdict.report(), truth["kinds"], truth["mode"])
    if "safe_any" in truth:
        assert (verdict.safety == "safe_any_placement") == truth["safe_any"], (verdict.safety, truth)


def test_samples_are_judged_under_the_loaders_placement_not_as_unassigned():
    doc = _doc(SAMPLES / "mutant_drop_wait_0020.json")
    verdict = validate(doc)
    assert not verdict.ok and verdict.safety == "unsafe" and verdict.classes == ["raw"]
    assert verdict.stats["placement"] == "amk_loader"
    placed = verdict.placed or placed_document(doc)
    sms = [t["sm"] for t in placed["tasks"]]
    # 45 tasks on an 82-SM grid: the loader gives every task an SM of its own
    assert sorted(sms) == list(range(45))
    assert validate(placed).classes == ["raw"]


def test_cycle_the_loader_refuses_is_named():
    verdict = validate(_doc(SAMPLES / "mutant_cycle_0003.json"))
    assert verdict.classes == ["dependency_cycle"] and len(verdict.violations[0]["witness"]["cycle"]) >= 2


def test_throughput_benchmark_runs_and_says_when_amk_is_not_importable(tmp_path):
    import importlib.util
    import os
    import subprocess
    import sys

    if importlib.util.find_spec("schedule") is not None:
        pytest.skip("a package named 'schedule' (AMK's?) is importable here, so AMK cannot be made absent")
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "AMK_PATH"}
    env["PYTHONPATH"] = str(root)
    out = tmp_path / "rows.json"
    run = subprocess.run([sys.executable, str(root / "bench" / "megakernel_amk_throughput.py"), "--rounds", "1",
                          "--budget", "0.001", "--amk", str(tmp_path / "no-amk-here"), "--json", str(out),
                          "--floor"],
                         capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "AutoMegaKernel is not importable" in run.stdout and "per class" in run.stdout
    assert "(floors need the native fast path and AMK)" in run.stdout
    rows = json.loads(out.read_text())
    assert len(rows) == 12 and all(r["ours_s"] > 0 and r["why_s"] > 0 and r["amk_s"] is None for r in rows)
    assert sum(r["ours_ok"] for r in rows) == 4
