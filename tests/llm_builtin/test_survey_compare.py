"""bench/builtin_survey.py's comparison of a written kernel's outputs with the reference's: a NaN
in the outputs must show as a NaN error (and a mismatch), not as an error of 0."""

import importlib.util
import math
from pathlib import Path

import torch

SURVEY = Path(__file__).resolve().parents[2] / "bench" / "builtin_survey.py"


def _survey():
    spec = importlib.util.spec_from_file_location("builtin_survey", SURVEY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_nan_output_is_a_mismatch_with_a_nan_error():
    compare = _survey().compare
    expected = (torch.ones(3), torch.ones(2))
    ok, worst = compare(expected, (torch.tensor([1.0, float("nan"), 1.0]), torch.full((2,), 3.0)))
    assert not ok and math.isnan(worst)
    ok, worst = compare(expected, (torch.ones(3), torch.tensor([1.0, 1.5])))
    assert not ok and worst == 0.5
    assert compare(expected, (torch.ones(3), torch.ones(2))) == (True, 0.0)
