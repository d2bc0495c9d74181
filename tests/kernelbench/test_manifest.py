"""The KernelBench manifest (suites/kernelbench/manifest.csv) against the problem files and the probe.

The committed manifest must be what `python -m harness.problems.manifest build` writes: identity, sizes,
fixes and exclusions are compared with the files, the degeneracy probe is rerun in-process at small
size, and the full-size FLOPs and bytes are recounted on the meta device for every model without a
recurrent layer (an LSTM's 512 steps on the meta device take tens of seconds each; `python -m
harness.problems.manifest check` covers those). Every problem the probe calls degenerate at the fp32
tolerance must be excluded.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from harness.problems import manifest  # noqa: E402
from harness.problems.problem import load_problem, read_metadata  # noqa: E402
from harness.problems.suite import REPRESENTATIVE, SUITE_ROOT, problem_files  # noqa: E402

HERE = Path(__file__).resolve().parent
UPSTREAM_COUNTS = {1: 100, 2: 100, 3: 50}


@pytest.fixture(scope="module")
def committed() -> list[dict[str, str]]:
    return manifest.read_manifest_text()


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return manifest.read_manifest()


@pytest.fixture(scope="module")
def rebuilt_small(committed) -> list[dict]:
    """Rows built now from the files, without the full-size columns (the probe runs at small size)."""
    names = {(int(row["level"]), int(row["id"])): row["upstream_name"] for row in committed}
    return manifest.build_rows(names, full_size=False)


def upstream_tables() -> dict[tuple[int, int], str]:
    """Upstream names from the level tests' own tables (extracted from upstream independently of the manifest)."""
    names = {}
    for level in (1, 2):
        table = json.loads((HERE / f"level{level}_upstream_table.json").read_text())
        names.update({(level, row["id"]): row["name"] for row in table["problems"]})
    tree = ast.parse((HERE / "test_level3_files.py").read_text())
    level3 = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                  and getattr(node.targets[0], "id", None) == "UPSTREAM_NAMES")
    names.update({(3, number): name for number, name in ast.literal_eval(level3).items()})
    return names


BUILD = "python -m harness.problems.manifest build"


def row_of(by_id: dict, problem_id: str) -> dict:
    """The manifest row of a problem file; a failure naming the command when the manifest lacks it."""
    if problem_id not in by_id:
        pytest.fail(f"{problem_id} has no row in suites/kernelbench/manifest.csv: after adding or renaming a "
                    f"problem file, run `{BUILD}` (it runs every reference: several minutes)", pytrace=False)
    return by_id[problem_id]


def test_manifest_has_one_row_per_upstream_problem_in_id_order(rows):
    files = [f"L{level}/{path.stem}" for level, path in problem_files()]
    unlisted = sorted(set(files) - {row["problem_id"] for row in rows})
    assert unlisted == [], f"problem files missing from the manifest; run `{BUILD}`"
    assert len(rows) == 250
    for level, count in UPSTREAM_COUNTS.items():
        assert [row["id"] for row in rows if row["level"] == level] == list(range(1, count + 1))
    assert [row["problem_id"] for row in rows] == [f"L{level}/{path.stem}" for level, path in problem_files()]


def test_manifest_rows_match_the_problem_files_metadata(rows):
    by_id = {row["problem_id"]: row for row in rows}
    for level, path in problem_files():
        row, metadata = row_of(by_id, f"L{level}/{path.stem}"), read_metadata(path.read_text(), path)
        fixes, exclude = metadata.get("FIXES") or {}, metadata.get("EXCLUDE")
        assert row["name"] == path.stem.split("_", 1)[1]
        assert row["small_size"] == json.loads(json.dumps(metadata.get("SMALL") or {})), row["problem_id"]
        assert row["fixes"] == fixes, row["problem_id"]
        assert {kind: row[f"fix_{kind}"] for kind in manifest.FIX_KINDS} == {
            kind: kind in fixes for kind in manifest.FIX_KINDS}, row["problem_id"]
        assert (row["excluded"], row["exclusion_reason"]) == (exclude is not None, exclude or ""), row["problem_id"]


def test_upstream_names_are_upstreams_and_ours_equal_them(rows):
    upstream = upstream_tables()
    assert {(row["level"], row["id"]): row["upstream_name"] for row in rows} == upstream
    assert [row["problem_id"] for row in rows if row["name"] != row["upstream_name"]] == []


def test_every_problem_whose_inputs_are_not_upstreams_rand_records_the_input_fix(rows):
    # Every upstream L1-L3 input is torch.rand (torch.randint for indices and masks); a file that
    # draws with torch.randn changed the distribution, and the manifest must say so.
    by_id = {row["problem_id"]: row for row in rows}
    unrecorded = []
    for level, path in problem_files():
        get_inputs = next(node for node in ast.parse(path.read_text()).body
                          if isinstance(node, ast.FunctionDef) and node.name == "get_inputs")
        draws = {ast.unparse(call.func) for call in ast.walk(get_inputs) if isinstance(call, ast.Call)}
        if "torch.randn" in draws and not row_of(by_id, f"L{level}/{path.stem}")["fix_input_distribution"]:
            unrecorded.append(f"L{level}/{path.stem}")
    assert unrecorded == [], f"{len(unrecorded)} problems draw torch.randn without FIXES['input_distribution']"


def test_upstream_representative_subset_is_in_the_manifest(rows):
    present = {(row["level"], row["id"]) for row in rows}
    wanted = {(level, number) for level, numbers in REPRESENTATIVE.items() for number in numbers}
    assert len(wanted) == 35 and wanted <= present


def test_small_size_columns_are_what_the_builder_writes_now(committed, rebuilt_small):
    assert manifest.stale_cells(committed, rebuilt_small, skip=manifest.FULL_SIZE_COLUMNS) == []


def test_every_problem_the_probe_calls_degenerate_at_fp32_tolerance_is_excluded(rows):
    # The manifest's probe column is the live probe's result: the test above reruns it.
    offenders = [f"{row['problem_id']}: {row['degenerate_probe']} passes at 1e-4"
                 for row in rows if row["degenerate_probe"] != "none" and not row["excluded"]]
    assert offenders == [], "each needs a fix in its file or an EXCLUDE; see suites/kernelbench/EXCLUDED.md"


def test_full_size_counts_are_current_for_every_model_without_recurrent_layers(rows):
    by_id = {row["problem_id"]: row for row in rows}
    recurrent, stale = [], []
    for level, path in problem_files():
        full = load_problem(path, size="full", level=level)
        if _has_recurrent_layer(full):
            recurrent.append(full.id)
            continue
        counted = manifest.count_full_size(full)
        row = row_of(by_id, full.id)
        if counted != (row["full_flops"], row["full_bytes"], row["flops_method"]):
            recorded = (row["full_flops"], row["full_bytes"], row["flops_method"])
            stale.append(f"{full.id}: counted {counted}, the manifest has {recorded}")
    assert stale == []
    assert len(recurrent) < 20, "recurrent models are skipped here; most problems must be recounted"


def _has_recurrent_layer(problem) -> bool:
    module = problem.module()
    with torch.device("meta"):
        model = module.Model(*module.get_init_inputs())
    return any(isinstance(layer, torch.nn.RNNBase) for layer in model.modules())


def test_full_size_counts_are_numbers_or_say_why_not(rows):
    for row in rows:
        if row["flops_method"] == "meta":
            assert row["full_flops"] >= 0 and row["full_bytes"] > 0, row["problem_id"]
        else:
            assert row["flops_method"].startswith("unavailable: ") and row["full_flops"] is None, row["problem_id"]


def test_excluded_list_is_generated_from_the_manifest(rows):
    assert manifest.EXCLUDED_PATH.read_text() == manifest.excluded_markdown(rows)
    for row in rows:
        assert (row["problem_id"] in manifest.EXCLUDED_PATH.read_text()) >= row["excluded"]


# ------------------------------------------------ the builder and the check on a suite of our own

IDENTITY_ON_RAND = '''
import torch
import torch.nn as nn

n = 64


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.{draw}(n, n)]


def get_init_inputs():
    return []


SMALL = {{"n": 8}}
FIXES = {fixes}
EXCLUDE = None
'''

DATA_DEPENDENT = '''
import torch
import torch.nn as nn

n = 64


class Model(nn.Module):
    def forward(self, x):
        return x * float(x.abs().max())


def get_inputs():
    return [torch.randn(n, n)]


def get_init_inputs():
    return []


SMALL = {"n": 8}
FIXES = {}
EXCLUDE = "kept out for the test"
'''


def _suite(tmp_path: Path, draw: str = "rand", fixes: str = "{}") -> Path:
    (tmp_path / "level1").mkdir(parents=True, exist_ok=True)
    (tmp_path / "level1" / "1_Relu.py").write_text(IDENTITY_ON_RAND.format(draw=draw, fixes=fixes))
    (tmp_path / "level1" / "2_Scaled.py").write_text(DATA_DEPENDENT)
    return tmp_path


UPSTREAM = {(1, 1): "Relu", (1, 2): "Scaled"}


def test_builder_records_probe_findings_exclusions_and_meta_failures(tmp_path):
    rows = manifest.build_rows(UPSTREAM, root=_suite(tmp_path), levels=(1,))
    relu, scaled = rows
    assert relu["degenerate_probe"] == relu["degenerate_probe_1e2"] == "passthrough"  # ReLU is the identity on rand
    assert relu["probe_size"] == "small,full" and relu["degenerate_probe_full"] == "passthrough"
    assert (relu["full_flops"], relu["full_bytes"], relu["flops_method"]) == (0, 2 * 64 * 64 * 4, "meta")
    assert scaled["excluded"] and scaled["exclusion_reason"] == "kept out for the test"
    assert scaled["flops_method"].startswith("unavailable: ") and scaled["full_bytes"] is None
    assert scaled["probe_size"] == "small"
    text = manifest.excluded_markdown(rows)
    assert "| L1/2_Scaled |" in text and "kept out for the test" in text
    assert "| L1/1_Relu | small: passthrough; full: passthrough |" in text  # flagged, not excluded


def test_check_passes_on_a_fresh_build_and_names_each_stale_cell(tmp_path):
    root = _suite(tmp_path / "suite")
    csv_path, excluded_path = tmp_path / "manifest.csv", tmp_path / "EXCLUDED.md"
    manifest.write(manifest.build_rows(UPSTREAM, root=root, levels=(1,)), csv_path, excluded_path)
    assert manifest.check(csv_path, excluded_path, UPSTREAM, root=root, levels=(1,)) == []
    assert manifest.read_manifest(csv_path)[0]["upstream_name"] == "Relu"

    _suite(root, draw="randn", fixes='{"input_distribution": "randn: ReLU is the identity on rand"}')
    problems = manifest.check(csv_path, excluded_path, UPSTREAM, root=root, levels=(1,), skip_full_size=True)
    changed = {line.split(": ", 2)[1].split(" ")[0] for line in problems if line.startswith("L1/1_Relu")}
    assert changed == {"fixes", "fix_input_distribution", "degenerate_probe", "degenerate_probe_1e2"}
    assert any(line.startswith(str(excluded_path)) for line in problems)


def test_check_without_a_manifest_says_how_to_build_one(tmp_path, capsys):
    assert manifest.main(["check", "--manifest", str(tmp_path / "none.csv")]) == 2
    assert "python -m harness.problems.manifest build" in capsys.readouterr().err


def test_shipped_manifest_lives_in_the_suite_folder():
    assert manifest.MANIFEST_PATH == SUITE_ROOT / "manifest.csv" and manifest.MANIFEST_PATH.is_file()
