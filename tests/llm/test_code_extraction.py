"""Code extraction from replies of every shape, with a clear verdict when there is no code."""

from __future__ import annotations

from harness.llm.extract import extract_code

MODULE = "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return {}\n"


def fenced(code: str, lang: str = "python", fence: str = "```") -> str:
    return f"{fence}{lang}\n{code}{fence}\n"


def test_one_fenced_block_is_taken_as_is():
    code = MODULE.format("x + 1")
    result = extract_code("Here you go:\n\n" + fenced(code) + "\nThis adds one.")
    assert result.verdict == "ok" and result.source == code and result.blocks == 1


def test_of_several_blocks_defining_modelnew_the_last_wins():
    reply = "Draft:\n" + fenced(MODULE.format("x + 1")) + "Better:\n" + fenced(MODULE.format("x + 2"))
    assert "x + 2" in extract_code(reply).source and "x + 1" not in extract_code(reply).source


def test_a_kernel_in_a_separate_block_is_joined_with_the_module():
    kernel = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef add_kernel(x_ptr):\n    pass\n"
    module = MODULE.format("add_kernel[(1,)](x) or x")
    result = extract_code("Kernel:\n" + fenced(kernel) + "Module:\n" + fenced(module))
    assert result.verdict == "ok"
    assert result.source.index("def add_kernel") < result.source.index("class ModelNew")


def test_reasoning_in_think_tags_is_ignored():
    reply = "<think>maybe\n" + fenced(MODULE.format("x * 0")) + "</think>\n" + fenced(MODULE.format("x * 3"))
    result = extract_code(reply)
    assert "x * 3" in result.source and "x * 0" not in result.source


def test_bare_code_without_a_fence_is_accepted_when_it_parses():
    result = extract_code(MODULE.format("x"))
    assert result.verdict == "ok" and "class ModelNew" in result.source


def test_a_reply_without_code_gets_a_clear_verdict():
    result = extract_code("I am sorry, I cannot help with that.")
    assert (result.source, result.verdict) == ("", "no_code")
    assert "no ```python code block" in result.reason


def test_code_that_never_defines_modelnew_gets_its_own_verdict():
    result = extract_code(fenced("def helper():\n    return 1\n"))
    assert (result.source, result.verdict) == ("", "no_model_new")
    assert "class ModelNew" in result.reason


def test_cuda_and_shell_blocks_are_not_python():
    reply = fenced("__global__ void k() {}\n", lang="cuda") + fenced("nvcc k.cu\n", lang="bash") + fenced(MODULE.format("x"))
    result = extract_code(reply)
    assert result.source.startswith("import torch") and result.blocks == 1


def test_a_fence_cut_off_by_the_token_limit_is_reported_as_a_syntax_error():
    reply = "```python\n" + MODULE.format("x")[:-25]
    result = extract_code(reply)
    assert result.verdict == "syntax_error" and "not valid Python" in result.reason
    assert "class ModelNew" in result.source


def test_tilde_fences_and_unlabelled_fences_are_code():
    assert extract_code(fenced(MODULE.format("x"), lang="", fence="~~~")).verdict == "ok"
    assert extract_code(fenced(MODULE.format("x"), lang="py")).verdict == "ok"
