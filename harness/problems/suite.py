"""Selecting problems: the shipped KernelBench suite, a user's upstream checkout, or single files."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from harness.errors import UserError
from harness.problems.problem import SHIPPED_ROOT, Problem, load_problem

SUITE_ROOT = SHIPPED_ROOT
LEVELS = (1, 2, 3)
# Upstream KernelBench's representative subset.
REPRESENTATIVE = {
    1: (1, 3, 6, 18, 23, 26, 33, 36, 40, 42, 48, 54, 57, 65, 77, 82, 86, 87),
    2: (1, 2, 8, 18, 23, 28, 33, 43),
    3: (1, 5, 8, 11, 20, 21, 33, 38, 43),
}
# A small cross-level set used by the harness's own GPU checks before the whole suite runs.
STARTER = {
    1: (1, 19, 23, 26, 36, 40, 47, 95),
    2: (1, 9, 23, 40),
    3: (1, 43),
}
# A fixed sample of 50 across the levels, every fifth problem of each (20 + 20 + 10): where a whole
# sweep costs too much, as with the torch.compile baseline, whose compiles dominate a sweep.
SAMPLE50 = {1: tuple(range(1, 101, 5)), 2: tuple(range(1, 101, 5)), 3: tuple(range(1, 51, 5))}
SUBSETS = {"all": None, "representative": REPRESENTATIVE, "starter": STARTER, "sample50": SAMPLE50}


def level_dir(root: Path, level: int) -> Path:
    for name in (f"level{level}", f"level_{level}"):
        if (root / name).is_dir():
            return root / name
    raise UserError(f"{root}: no level{level}/ folder. For an upstream KernelBench checkout pass its root "
                    "(the folder that holds KernelBench/level1 ...) or that KernelBench/ folder itself.")


def resolve_root(kernelbench_root: str | Path | None) -> Path:
    if kernelbench_root is None:
        return SUITE_ROOT
    root = Path(kernelbench_root)
    if (root / "KernelBench").is_dir():
        root = root / "KernelBench"
    if not root.is_dir():
        raise UserError(f"--kernelbench-root {kernelbench_root}: no such folder")
    return root


def problem_files(levels=LEVELS, patterns: list[str] | None = None, subset: str = "all",
                  kernelbench_root: str | Path | None = None) -> list[tuple[int, Path]]:
    """(level, path) for every selected problem, in level then id order."""
    if subset not in SUBSETS:
        raise UserError(f"--subset {subset!r} is unknown; use one of: {', '.join(SUBSETS)}")
    root = resolve_root(kernelbench_root)
    chosen = []
    for level in levels:
        folder = level_dir(root, level)
        for path in sorted(folder.glob("*.py"), key=_id_key):
            if _selected(level, path, patterns, SUBSETS[subset]):
                chosen.append((level, path))
    return chosen


def _id_key(path: Path):
    head = path.stem.split("_", 1)[0]
    return (int(head) if head.isdigit() else 10**9, path.stem)


def _selected(level: int, path: Path, patterns, subset) -> bool:
    if path.stem.startswith("_"):
        return False
    number = _id_key(path)[0]
    if subset is not None and number not in subset.get(level, ()):
        return False
    if not patterns:
        return True
    names = (path.stem, f"L{level}/{path.stem}", str(number), f"L{level}/{number}")
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns for name in names)


def load_selected(size: str, **selection) -> list[Problem]:
    return [load_problem(path, size=size, level=level) for level, path in problem_files(**selection)]


def parse_levels(text: str) -> tuple[int, ...]:
    try:
        levels = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UserError(f"--level {text!r}: give level numbers separated by commas, e.g. 1,2") from None
    bad = [level for level in levels if level not in LEVELS]
    if bad or not levels:
        raise UserError(f"--level {text!r}: levels are 1, 2 and 3")
    return levels
