"""Rewriting a problem file's module-level size constants: declared small sizes and best-effort shrinking.

Both work on the source text (AST), before the file runs, so that derived constants
(``input_shape = (dim,)``) follow the rewritten ones.
"""

from __future__ import annotations

import ast
from typing import Any

from harness.errors import UserError

# Constant names that describe a structure rather than a size; a shrink leaves them alone.
_STRUCTURAL = ("kernel", "stride", "padding", "dilation", "groups", "pool", "axis", "eps", "num_layers",
               "layers", "factor", "value", "scale", "heads", "head", "block", "window")


def apply_overrides(source: str, overrides: dict[str, Any], where: str = "problem") -> str:
    """The source with each top-level assignment to a name in ``overrides`` given the new value."""
    if not overrides:
        return source
    tree = ast.parse(source)
    pending = set(overrides)
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                _rewrite_target(node, target, overrides, pending)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            if node.target.id in overrides:
                node.value = _literal(overrides[node.target.id])
                pending.discard(node.target.id)
    if pending:
        raise UserError(f"{where}: size overrides name constants the file does not assign at top level: "
                        f"{', '.join(sorted(pending))}")
    return ast.unparse(ast.fix_missing_locations(tree))


def _rewrite_target(node: ast.Assign, target: ast.expr, overrides: dict, pending: set) -> None:
    if isinstance(target, ast.Name) and target.id in overrides:
        node.value = _literal(overrides[target.id])
        pending.discard(target.id)
    elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
        for index, element in enumerate(target.elts):
            if isinstance(element, ast.Name) and element.id in overrides and index < len(node.value.elts):
                node.value.elts[index] = _literal(overrides[element.id])
                pending.discard(element.id)


def _literal(value: Any) -> ast.expr:
    return ast.parse(repr(value), mode="eval").body


def _is_size(value) -> bool:
    is_int = lambda v: isinstance(v, int) and not isinstance(v, bool)  # noqa: E731
    return is_int(value) or (isinstance(value, tuple) and bool(value) and all(is_int(v) for v in value))


def integer_constants(source: str) -> dict[str, Any]:
    """Top-level names bound to integer (or tuple-of-integer) expressions (``N = 2048 * 2``), in order."""
    tree = ast.parse(source)
    scope: dict[str, Any] = {}
    found: dict[str, int] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        pairs = _name_value_pairs(node)
        for name, expr in pairs:
            try:
                value = eval(compile(ast.Expression(expr), "<size>", "eval"), {"__builtins__": {}}, dict(scope))
            except Exception:
                continue
            scope[name] = value
            if _is_size(value):
                found[name] = value
    return found


def _name_value_pairs(node: ast.Assign) -> list[tuple[str, ast.expr]]:
    pairs = []
    for target in node.targets:
        if isinstance(target, ast.Name):
            pairs.append((target.id, node.value))
        elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
            pairs += [(t.id, v) for t, v in zip(target.elts, node.value.elts) if isinstance(t, ast.Name)]
    return pairs


def is_structural(name: str) -> bool:
    return any(word in name.lower() for word in _STRUCTURAL)


def literal_size_constants(source: str) -> dict[str, Any]:
    """Size constants bound to expressions of literals only (``N = 2048 * 2``, not ``shape = (N,)``),
    structural ones left out: the constants a shrink may change, the others following them."""
    literal = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            literal.update(name for name, expr in _name_value_pairs(node)
                           if not any(isinstance(inner, ast.Name) for inner in ast.walk(expr)))
    return {name: value for name, value in integer_constants(source).items()
            if name in literal and not is_structural(name)}


def shrink_overrides(source: str, factor: int) -> dict[str, int]:
    """Divide every size-like integer constant above 16 by ``factor`` (never below 16 or 1/factor-th)."""
    overrides = {}
    for name, value in integer_constants(source).items():
        if is_structural(name):
            continue
        shrunk = tuple(_shrink(v, factor) for v in value) if isinstance(value, tuple) else _shrink(value, factor)
        if shrunk != value:
            overrides[name] = shrunk
    return overrides


def _shrink(value: int, factor: int) -> int:
    return value if value <= 16 else max(16, value // factor)
