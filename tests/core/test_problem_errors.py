"""Errors about the files given to the harness name what is wrong with each of them."""

import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.problems.problem import load_problem

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = ROOT / "tests" / "fixtures" / "problems" / "1_Scale_ReLU.py"


@pytest.mark.parametrize("size", ["small", "full"])
def test_a_reference_without_get_inputs_says_so_rather_than_that_it_cannot_shrink(tmp_path, size):
    text = PROBLEM.read_text().replace("def get_inputs():", "def make_inputs():").replace("SMALL = ", "_SMALL = ")
    path = tmp_path / "1_No_Inputs.py"
    path.write_text(text)
    with pytest.raises(UserError) as caught:
        load_problem(path, size=size)
    assert "has no get_inputs" in str(caught.value) and "shrink" not in str(caught.value)


def test_eval_with_a_missing_reference_and_a_missing_candidate_names_both(tmp_path):
    done = subprocess.run([sys.executable, "-m", "harness", "eval", "--reference", str(tmp_path / "ref.py"),
                           "--candidate", str(tmp_path / "cand.py"), "--no-record"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert f"--reference {tmp_path / 'ref.py'}" in done.stderr and f"--candidate {tmp_path / 'cand.py'}" in done.stderr
