"""An upstream KernelBench checkout (--kernelbench-root) loads unchanged and gets the same verdicts."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT / "suites" / "kernelbench" / "fixtures_upstream"


def _pairs():
    from harness.problems.suite import problem_files

    ours = {path.stem: (level, path) for level, path in problem_files(levels=(1, 2, 3))}
    upstream = problem_files(levels=(1, 2), kernelbench_root=UPSTREAM)
    return [(path, ours[path.stem][1], level) for level, path in upstream if path.stem in ours]


def test_upstream_layout_is_found_and_every_fixture_has_a_counterpart():
    pairs = _pairs()
    assert len(pairs) >= 4


@pytest.mark.parametrize("upstream_path,our_path,level", _pairs(), ids=lambda v: getattr(v, "stem", str(v)))
def test_same_verdicts_for_reference_and_for_a_wrong_candidate(upstream_path, our_path, level, fast_opts):
    from harness.judge.evaluate import EvalCache, evaluate
    from harness.problems.problem import load_problem

    fast_opts.trials = 2
    verdicts = []
    for path in (upstream_path, our_path):
        problem = load_problem(path, size="small", level=level)
        right = evaluate(problem, problem.source + "\nModelNew = Model\n", fast_opts, EvalCache())
        wrong_source = problem.source + "\nclass ModelNew(Model):\n    def forward(self, *args):\n        return super().forward(*args) * 1.5 + 0.1\n"
        wrong = evaluate(problem, wrong_source, fast_opts, EvalCache())
        verdicts.append((right["status"], wrong["status"]))
    assert verdicts[0] == verdicts[1] == ("ok", "incorrect")


def test_upstream_file_without_a_declared_small_size_is_shrunk_and_says_what_changed(tmp_path):
    from harness.problems.problem import load_problem

    source = (UPSTREAM / "level1" / "1_Square_matrix_multiplication_.py").read_text()
    big = tmp_path / "level1" / "1_Big_Square_Matmul.py"  # not a problem we ship: no declared size to take
    big.parent.mkdir()
    big.write_text(source.replace("N = ", "N = 16 * ", 1))
    problem = load_problem(big, size="small")
    assert problem.shrunk and all(v <= 2048 for v in problem.shrunk.values() if isinstance(v, int))


def test_an_upstream_file_of_a_problem_we_ship_takes_our_declared_small_size():
    from harness.problems.problem import load_problem, read_metadata

    ours = ROOT / "suites" / "kernelbench" / "level1" / "1_Square_matrix_multiplication_.py"
    problem = load_problem(UPSTREAM / "level1" / "1_Square_matrix_multiplication_.py", size="small", level=1)
    assert problem.shrunk == read_metadata(ours.read_text())["SMALL"]


def test_a_shrink_keeps_constants_the_model_ties_together_consistent(tmp_path):
    # L2/34's shape: the LayerNorm normalizes the last axis, whose length 2 * W must stay out_channels.
    from harness.problems.problem import load_problem
    from harness.problems.shrink import MAX_ELEMENTS

    ours = (ROOT / "suites" / "kernelbench" / "level2" / "34_ConvTranspose3d_LayerNorm_GELU_Scaling.py").read_text()
    path = tmp_path / "level2" / "34_Tied_Constants.py"
    path.parent.mkdir()
    path.write_text(ours.split("\nSMALL = ")[0] + "\n")
    problem = load_problem(path, size="small")
    module = problem.module()
    import torch

    inputs = module.get_inputs()
    output = module.Model(*module.get_init_inputs())(*inputs)
    assert module.out_channels == 2 * module.W and "out_channels" in problem.shrunk
    assert inputs[0].numel() + output.numel() <= MAX_ELEMENTS and torch.isfinite(output).all()


def test_a_file_that_cannot_be_shrunk_gets_a_message_with_the_fix(tmp_path):
    from harness.errors import UserError
    from harness.problems.problem import load_problem

    path = tmp_path / "level1" / "1_Fixed.py"
    path.parent.mkdir()
    path.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
                    "def get_inputs():\n    return [torch.randn(4096, 4096)]\ndef get_init_inputs():\n    return []\n")
    with pytest.raises(UserError, match="SMALL ="):
        load_problem(path, size="small")


def test_degeneracy_probe_flags_upstream_softmax_but_not_ours(fast_opts):
    from harness.judge.evaluate import EvalCache, evaluate
    from harness.problems.problem import load_problem

    results = {}
    for name, path in (("upstream", UPSTREAM / "level1" / "23_Softmax.py"),
                       ("ours", ROOT / "suites" / "kernelbench" / "level1" / "23_Softmax.py")):
        problem = load_problem(path, size="full" if name == "upstream" else "small", level=1)
        results[name] = evaluate(problem, problem.source + "\nModelNew = Model\n", fast_opts, EvalCache())
    assert results["upstream"]["degenerate"] is True
    assert results["ours"]["degenerate"] is False
