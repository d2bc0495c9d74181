"""Generators are plug-ins found without a central list: one new file under submitters/, or a
package that names its class in the entry-point group ``crucible.generators``."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytest_plugins = ["pytester"]

# A generator written the way a researcher would: it declares its own option and writes a correct
# candidate (the problem's Model under another name) whose label carries that option's value.
GENERATOR = '''
from harness.candidate import Candidate
from harness.options import Option

TAG = Option("--{name}-tag", "{name}: a label for the candidate", default="plain")


{decorator}
class {cls}:
    options = (TAG,)

    def __init__(self, {name}_tag=None):
        self.tag = {name}_tag or TAG.default

    def generate(self, problem, ctx):
        return [Candidate(problem.source + "\\n\\nModelNew = Model\\n", label=f"{name}:{{self.tag}}")]
'''


def _suite_args(tmp_path, generator, *extra):
    return [str(ROOT / "suites" / "kernelbench" / "test_kernelbench.py"), "--generator", generator,
            "--level", "1", "--problem", "L1/1_*", "--no-timing", "--trials", "2", "-p", "no:cacheprovider",
            "--runs-dir", str(tmp_path / "runs"), "--kernelbench-root", str(ROOT / "tests" / "fixtures" / "problems_root"),
            *extra]


def _records(tmp_path) -> list[dict]:
    (run_file,) = (tmp_path / "runs").glob("*.jsonl")
    return [line for line in map(json.loads, run_file.read_text().splitlines()) if line["type"] == "record"]


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.py"))}


def test_a_generator_added_as_one_new_file_under_submitters_runs_with_its_own_option(pytester, tmp_path, monkeypatch):
    # A copy of submitters/ stands in for the checkout, so the real tree is never written to.
    home = tmp_path / "checkout"
    shutil.copytree(ROOT / "submitters", home / "submitters", ignore=shutil.ignore_patterns("__pycache__"))
    before = _tree(home)
    (home / "submitters" / "tagger.py").write_text("from harness.registry import register\n" + GENERATOR.format(
        name="tagger", cls="Tagger", decorator='@register("generator", "tagger")'))
    after = _tree(home)
    assert set(after) - set(before) == {"submitters/tagger.py"}
    assert all(after[name] == content for name, content in before.items())
    monkeypatch.setenv("PYTHONPATH", f"{home}{os.pathsep}{ROOT}")

    result = pytester.runpytest_subprocess(*_suite_args(tmp_path, "tagger", "--tagger-tag", "loud"))

    result.assert_outcomes(passed=1)
    (record,) = _records(tmp_path)
    assert (record["generator"], record["label"], record["correct"]) == ("tagger", "tagger:loud", True)


def _install_dist(site: Path, package: str, entry_name: str, cls: str) -> None:
    """A minimal installed distribution: the module, and a .dist-info naming its entry point."""
    (site / f"{package}.py").write_text(GENERATOR.format(name=package, cls=cls, decorator=""))
    info = site / f"{package}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[crucible.generators]\n{entry_name} = {package}:{cls}\n")


def test_a_generator_from_an_installed_package_entry_point_runs_and_is_loaded_only_when_used(pytester, tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    _install_dist(site, "epgen", "ep-gen", "EpGen")
    monkeypatch.setenv("PYTHONPATH", f"{site}{os.pathsep}{ROOT}")

    listed = subprocess.run([sys.executable, "-c", "import sys; from harness import registry; "
                             "print(registry.names('generator')); print('epgen' in sys.modules)"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert listed.returncode == 0, listed.stderr
    names, imported = listed.stdout.splitlines()[-2:]
    assert "'ep-gen'" in names and imported == "False"

    result = pytester.runpytest_subprocess(*_suite_args(tmp_path, "ep-gen", "--epgen-tag", "from-dist"))

    result.assert_outcomes(passed=1)
    (record,) = _records(tmp_path)
    assert (record["generator"], record["label"], record["correct"]) == ("ep-gen", "epgen:from-dist", True)


def test_an_unknown_generator_error_says_how_to_add_one():
    from harness.registry import PluginError, create

    with pytest.raises(PluginError) as caught:
        create("generator", "no-such-gen")
    message = str(caught.value)
    assert "known generators: " in message and "reference" in message
    assert "submitters/no_such_gen.py" in message and "crucible.generators" in message


def test_a_generator_option_given_to_a_generator_that_does_not_take_it_is_refused():
    from harness.errors import UserError
    from harness.options import generator_kwargs

    given = {"samples": 3}
    assert generator_kwargs("direct", given.get) == {"samples": 3}
    with pytest.raises(UserError, match="generator 'kforge' does not take --samples"):
        generator_kwargs("kforge", given.get)


def test_a_generator_file_that_does_not_import_is_named_in_the_error(tmp_path, monkeypatch):
    home = tmp_path / "checkout"
    shutil.copytree(ROOT / "submitters", home / "submitters", ignore=shutil.ignore_patterns("__pycache__"))
    (home / "submitters" / "broken.py").write_text("import no_such_module_here\n")
    env = {**os.environ, "PYTHONPATH": f"{home}{os.pathsep}{ROOT}"}
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--help"], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 2
    assert "submitters.broken failed to import" in done.stderr and "no_such_module_here" in done.stderr


def test_suites_run_only_for_generators_that_write_candidates_for_them(pytester, tmp_path):
    result = pytester.runpytest_subprocess(*_suite_args(tmp_path, "schedule-search"), "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*schedule-search writes candidates for megakernel, not for the kernelbench suite*"])
    assert not (tmp_path / "runs").exists()
