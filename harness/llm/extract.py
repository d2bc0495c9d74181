"""Code from a model's reply: the fenced block that defines ``ModelNew``, made whole.

Replies come in many shapes: one ```python block; several (the kernel in one, the module in
another; a first draft then a fix); a ``<think>`` section full of drafts before the answer; bare
code with no fence; a fence the token limit cut off; or no code at all. Every shape ends in a
source or a clear verdict saying why there is none.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

# An opening fence (``` or ~~~, optional language tag) at the start of a line, up to its closing twin.
_FENCE = re.compile(
    r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+.-]*)[^\n]*\n"   # opening fence and language tag
    r"(?P<body>.*?)"
    r"(?:^[ \t]*(?P=fence)[ \t]*$|\Z)",                               # closing fence, or the reply's end
    re.MULTILINE | re.DOTALL,
)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_NOT_PYTHON = {"cpp", "c++", "c", "cuda", "cu", "bash", "sh", "shell", "console", "text", "json", "yaml", "diff"}
# ``class ModelNew`` or a top-level ``ModelNew = ...`` (an alias the judge accepts just as well).
_MODEL_NEW = re.compile(r"^(?:\s*class\s+ModelNew\b|ModelNew\s*(?::[^=\n]*)?=(?!=))", re.MULTILINE)


@dataclass(frozen=True)
class Extraction:
    source: str        # "" when there is no usable code
    verdict: str       # ok | no_code | no_model_new | syntax_error
    reason: str        # one line for the user and for feedback to the model
    blocks: int = 0    # fenced blocks found


def extract_code(reply: str) -> Extraction:
    """The candidate source in ``reply``, or a verdict with the reason there is none."""
    text = _THINK.sub("", reply or "")
    blocks = _python_blocks(text)
    if not blocks:
        if _MODEL_NEW.search(text) and _parses(text):
            return Extraction(text.strip() + "\n", "ok", "the reply is bare code defining ModelNew", 0)
        return Extraction("", "no_code", "the reply contains no ```python code block", 0)
    defining = [block for block in blocks if _MODEL_NEW.search(block)]
    if not defining:
        return Extraction("", "no_model_new", "no code block in the reply defines class ModelNew (or assigns ModelNew = ...)", len(blocks))
    chosen = defining[-1]  # a later block is a revision of an earlier one
    source = _complete(chosen, [block for block in blocks if block is not chosen])
    if not _parses(source):
        error = _syntax_error(source)
        return Extraction(source, "syntax_error", f"the code block defining ModelNew is not valid Python ({error})",
                          len(blocks))
    return Extraction(source, "ok", "", len(blocks))


def _python_blocks(text: str) -> list[str]:
    blocks = []
    for match in _FENCE.finditer(text):
        if match.group("lang").lower() in _NOT_PYTHON:
            continue
        body = match.group("body").strip("\n")
        if body.strip():
            blocks.append(body + "\n")
    return blocks


def _complete(chosen: str, others: list[str]) -> str:
    """Prepend the other blocks that define names ``chosen`` uses but does not define (a kernel,
    a helper, an import written in a separate block), in the order the reply gave them."""
    missing = _used_names(chosen) - _defined_names(chosen)
    if not missing:
        return chosen
    needed = [block for block in others if _defined_names(block) & missing and _parses(block)]
    return "\n\n".join(needed + [chosen]) if needed else chosen


def _defined_names(source: str) -> set[str]:
    tree = _tree(source)
    if tree is None:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _used_names(source: str) -> set[str]:
    tree = _tree(source)
    if tree is None:
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def _tree(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _parses(source: str) -> bool:
    return _tree(source) is not None


def _syntax_error(source: str) -> str:
    try:
        ast.parse(source)
    except SyntaxError as error:
        return f"{error.msg}, line {error.lineno}"
    return "unknown error"
