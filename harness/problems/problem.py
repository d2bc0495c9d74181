"""Loading problems in the KernelBench format from any file, at full or small size.

A problem file is trusted code (ours, or the user's own checkout); it runs in the judge.
Candidates are never loaded here: they run only in a worker process (harness/worker).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from harness.problems import sizes
from harness.errors import UserError

SIZES = ("full", "small")
SHIPPED_ROOT = Path(__file__).resolve().parents[2] / "suites" / "kernelbench"  # the suite we ship
_METADATA = ("SMALL", "FIXES", "EXCLUDE")
_STEM = re.compile(r"^(\d+)_(.+)$")


@dataclass
class Problem:
    """One problem at one size: its identity, its (possibly rewritten) source and its metadata."""

    id: str                       # "L2/23_Conv3d_GroupNorm_Mean"
    name: str                     # "Conv3d_GroupNorm_Mean"
    number: int | None
    level: int | None
    suite: str
    path: Path
    size: str
    source: str                   # the source as run at this size
    small: dict[str, Any] = field(default_factory=dict)
    fixes: dict[str, str] = field(default_factory=dict)
    exclude: str | None = None
    shrunk: dict[str, int] | None = None   # constants changed automatically (shipped SMALL or the shrink)

    @property
    def source_sha(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]

    def module(self) -> ModuleType:
        """Execute the source (cached per source) and return the module."""
        return load_module(self.source, f"crucible_problem_{self.source_sha}")


def load_problem(path: str | Path, size: str = "full", level: int | None = None, suite: str = "kernelbench") -> Problem:
    """Read a problem file and prepare it at ``size`` ('full' or 'small')."""
    path = Path(path)
    if size not in SIZES:
        raise UserError(f"--size {size!r} is not a size; use one of: {', '.join(SIZES)}")
    if not path.is_file():
        raise UserError(f"problem file {path} does not exist")
    text = path.read_text()
    metadata = read_metadata(text, path)
    _check_required(text, path)
    level = level if level is not None else _level_from_path(path)
    number, name = _number_and_name(path.stem)
    problem = Problem(
        id=f"L{level}/{path.stem}" if level is not None else path.stem, name=name, number=number, level=level,
        suite=suite, path=path, size=size, source=text, small=metadata.get("SMALL") or {},
        fixes=metadata.get("FIXES") or {}, exclude=metadata.get("EXCLUDE"),
    )
    if size == "small":
        _make_small(problem)
    return problem


def read_metadata(text: str, where: Any = "problem") -> dict[str, Any]:
    """The literal values of SMALL, FIXES and EXCLUDE, read without running the file."""
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise UserError(f"{where}: not valid Python ({error.msg}, line {error.lineno})") from None
    found: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in _METADATA:
                try:
                    found[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    raise UserError(f"{where}: {node.targets[0].id} must be a literal (dict, string or None)") from None
    return found


REQUIRED = ("Model", "get_inputs", "get_init_inputs")


def _check_required(text: str, where: Any) -> None:
    """A problem defines Model, get_inputs and get_init_inputs at module level; said before any
    attempt to run or shrink it, so that the error names what is missing."""
    defined: set[str] = set()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    missing = [name for name in REQUIRED if name not in defined]
    if missing:
        raise UserError(f"{where}: a problem must define {', '.join(REQUIRED)} at module level; it has no "
                        f"{' and no '.join(missing)} (docs/INTERFACES.md, section 1)")


def _make_small(problem: Problem) -> None:
    if problem.small:
        problem.source = sizes.apply_overrides(problem.source, problem.small, str(problem.path))
        return
    shipped = _shipped_small(problem)
    if shipped:
        try:
            problem.source, problem.shrunk = sizes.apply_overrides(problem.source, shipped, str(problem.path)), shipped
            return
        except UserError:
            pass  # the file's constants are not ours (renamed, restructured): shrink it instead
    from harness.problems.shrink import shrink_to_small

    problem.shrunk, problem.source = shrink_to_small(problem.source, str(problem.path), load_module)


def _shipped_small(problem: Problem) -> dict[str, Any]:
    """The declared small size of the problem we ship under the same level and file name (an upstream
    file of a problem we ship), or {}."""
    if problem.level is None:
        return {}
    shipped = SHIPPED_ROOT / f"level{problem.level}" / problem.path.name
    if not shipped.is_file() or shipped.resolve() == problem.path.resolve():
        return {}
    return dict(read_metadata(shipped.read_text(), shipped).get("SMALL") or {})


_MODULE_DIR = Path(tempfile.gettempdir()) / "crucible-problems"


def load_module(source: str, module_name: str) -> ModuleType:
    """Import source text as a real module backed by a file, so that tools that read source
    (Triton's @jit, inspect, tracebacks) work. Cached by name in sys.modules."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    _MODULE_DIR.mkdir(parents=True, exist_ok=True)
    path = _MODULE_DIR / f"{module_name}.py"
    if not path.exists() or path.read_text() != source:
        path.write_text(source)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    for required in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, required):
            del sys.modules[module_name]
            raise UserError(f"{module_name}: a problem must define Model, get_inputs and get_init_inputs; {required} is missing")
    return module


def _level_from_path(path: Path) -> int | None:
    for part in reversed(path.parts[:-1]):
        match = re.fullmatch(r"level_?(\d+)", part.lower())
        if match:
            return int(match.group(1))
    return None


def _number_and_name(stem: str) -> tuple[int | None, str]:
    match = _STEM.match(stem)
    if match:
        return int(match.group(1)), match.group(2)
    return None, stem


def problem_from_source(source: str, problem_id: str, *, level: int | None = None, suite: str = "generated",
                        size: str = "full") -> Problem:
    """A Problem from source text (for problems built at run time, e.g. a sub-module of a model)."""
    metadata = read_metadata(source, problem_id)
    number, name = _number_and_name(problem_id.rsplit("/", 1)[-1])
    return Problem(id=problem_id, name=name, number=number, level=level, suite=suite, path=Path(f"<{problem_id}>"),
                   size=size, source=source, small=metadata.get("SMALL") or {}, fixes=metadata.get("FIXES") or {},
                   exclude=metadata.get("EXCLUDE"))
