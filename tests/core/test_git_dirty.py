"""A run header says whether the code that ran differed from the commit it names (device.git_dirty)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from harness.judge.device import git_dirty, provenance

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_edited_tracked_files_mark_the_tree_dirty_and_untracked_ones_do_not(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "kernel.py").write_text("x = 1\n")
    _git(tmp_path, "add", "kernel.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    assert git_dirty(tmp_path) is False
    (tmp_path / "run.jsonl").write_text("{}\n")          # a run file written beside the code
    assert git_dirty(tmp_path) is False
    (tmp_path / "kernel.py").write_text("x = 2\n")       # the code that runs is not the commit's
    assert git_dirty(tmp_path) is True


def test_outside_a_repository_it_cannot_tell(tmp_path):
    assert git_dirty(tmp_path) is None


def test_the_run_header_carries_it():
    header = provenance("cpu")
    assert "git_dirty" in header and header["git_dirty"] == git_dirty()
