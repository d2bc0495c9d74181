"""The leaderboard's data layer: run files to a light DataFrame, fast, without torch.

The summary columns of every record come from ``harness.records.run_table`` (pyarrow's JSON reader with
an explicit schema, a tolerant line reader for files it refuses; every bad line or file is a
warning naming it, every good record is kept). Each file's columns are cached as an Arrow file.
The drill-down reads one full record back from its file on demand (``full_record``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness.records import run_table
from harness.errors import UserError
from harness.records.results import attach_details, find_run_files


@dataclass
class LoadResult:
    """The records of a results folder, one row each, plus what could not be read and why."""

    frame: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    files: int = 0


def runs_folder(results: str | os.PathLike) -> Path:
    """``results/`` holds ``runs/`` (and ``megakernel/``); a folder of run files works too."""
    root = Path(results)
    if not root.exists():
        raise UserError(f"{root}: no such results folder; pass --results DIR with Crucible run files")
    return root / "runs" if (root / "runs").is_dir() else root


def load_frame(results: str | os.PathLike, cache: bool = True) -> LoadResult:
    """Every record under a results folder as a DataFrame of the light columns.

    With ``cache``, each run file's columns are kept as an Arrow file under ``cache_folder()``,
    keyed by the run file's path, size and modification time: run files only ever grow, so a
    changed file misses and is read again, and an unchanged one costs a memory map."""
    files = find_run_files([runs_folder(results)])
    folder = cache_folder() if cache else None
    reader = (lambda path, notes: _cached_table(path, folder, notes)) if folder else run_table.file_table
    result = run_table.read_tables(files, reader)
    return LoadResult(run_table.to_frame(result.table), result.warnings, result.files)


CACHE_FORMAT = "leaderboard-columns/2"  # bump when the columns change


def cache_folder() -> Path | None:
    """``$CRUCIBLE_CACHE/leaderboard`` (default ``~/.cache/crucible``); None if it cannot be made."""
    root = Path(os.environ.get("CRUCIBLE_CACHE") or Path.home() / ".cache" / "crucible")
    try:
        (root / "leaderboard").mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return root / "leaderboard"


def _cached_table(path: Path, folder: Path, warnings: list[str]):
    import hashlib

    import pyarrow as pa

    stat = path.stat()
    key = f"{CACHE_FORMAT}:{stat.st_size}:{stat.st_mtime_ns}".encode()
    # One entry per path as given (the run_file column holds it), replaced when the file changes.
    entry = folder / (hashlib.sha256(str(path).encode()).hexdigest()[:32] + ".arrow")
    try:
        with pa.memory_map(str(entry)) as source:
            table = pa.ipc.open_file(source).read_all()
        metadata = table.schema.metadata or {}
        if metadata.get(b"key") == key:
            warnings.extend(json.loads(metadata.get(b"warnings", b"[]")))  # a bad line stays reported
            return table.replace_schema_metadata(None)
    except (OSError, pa.ArrowInvalid, ValueError):
        pass  # no entry yet, or an unreadable one: read the run file and write a fresh entry
    notes: list[str] = []
    table = run_table.file_table(path, notes)
    warnings.extend(notes)
    _write_entry(entry, table.replace_schema_metadata({"key": key, "warnings": json.dumps(notes)}))
    return table


def _write_entry(entry: Path, table) -> None:
    import pyarrow as pa

    partial = entry.with_suffix(f".{os.getpid()}.tmp")
    try:
        with pa.OSFile(str(partial), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        os.replace(partial, entry)  # readers see a whole entry or none
    except OSError:
        partial.unlink(missing_ok=True)


def records_of(frame: pd.DataFrame) -> list[dict]:
    """Rows as dicts (the shape ``harness.records.metrics`` reads), NaN left for metrics to treat as missing."""
    columns = list(frame.columns)
    values = [frame[name].tolist() for name in columns]
    return [dict(zip(columns, row)) for row in zip(*values)]


def full_record(run_file: str, line_index: int, problem_id: str | None = None) -> dict:
    """The complete record (source, transcript, provenance) behind one row of the frame:
    ``line_index`` is its physical line (0-based), whatever lines around it could not be read."""
    with open(run_file, "rb") as handle:
        for index, raw in enumerate(handle):
            if index == line_index:
                record = json.loads(raw.decode("utf-8"))
                if problem_id is None or record.get("problem_id") == problem_id:
                    return attach_details(run_file, [record])[0]
                break
    raise UserError(f"{run_file}: record {line_index} ({problem_id}) not found; was the file rewritten?")


def load_megakernel_summary(results: str | os.PathLike) -> dict | None:
    """``results/megakernel/summary.json`` if present and readable, else None."""
    path = Path(results) / "megakernel" / "summary.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


CONFUSION_ALIASES = {"tp": "true_reject", "tn": "true_accept", "fp": "false_reject", "fn": "false_accept"}


def megakernel_view(summary: dict | None) -> dict:
    """The megakernel summary in one shape for the charts, whichever layout wrote it:
    ``confusion`` {tp, tn, fp, fn} (positive = unsafe, flagged by rejecting), ``per_class``
    {class: {total, rejected, accepted, false_accept, false_reject}} and ``trajectory``
    [{iteration, cost, best_cost}]; a part the summary lacks is left out."""
    summary = summary if isinstance(summary, dict) else {}
    view = {}
    confusion = _confusion(summary.get("confusion"))
    if confusion:
        view["confusion"] = confusion
    per_class = _per_class(summary.get("per_class"))
    if per_class:
        view["per_class"] = per_class
    trajectory = _trajectory(summary)
    if trajectory:
        view["search_trajectory"] = trajectory
    return view


def _confusion(confusion) -> dict | None:
    if not isinstance(confusion, dict):
        return None
    if isinstance(confusion.get("all"), dict):  # split by oracle mode, with the total under "all"
        confusion = confusion["all"]
    values = {}
    for short, long in CONFUSION_ALIASES.items():
        value = confusion.get(short, confusion.get(long))
        if not isinstance(value, (int, float)):
            return None
        values[short] = int(value)
    return values


def _per_class(per_class) -> dict:
    if isinstance(per_class, list):  # [{class, n, rejected, ...}]
        per_class = {str(row.get("class")): row for row in per_class if isinstance(row, dict)}
    if not isinstance(per_class, dict):
        return {}
    rows = {}
    for name, row in per_class.items():
        if not isinstance(row, dict):
            continue
        total = row.get("total", row.get("n"))
        rejected = row.get("rejected")
        if not isinstance(total, (int, float)) or not isinstance(rejected, (int, float)):
            continue
        rows[name] = {"total": int(total), "rejected": int(rejected),
                      "accepted": int(row.get("accepted", total - rejected)),
                      "false_accept": int(row.get("false_accept", 0) or 0),
                      "false_reject": int(row.get("false_reject", 0) or 0)}
    return rows


def _trajectory(summary: dict) -> list[dict]:
    """Per search iteration the candidate's cost and the best kept cost so far."""
    search = summary.get("search") if isinstance(summary.get("search"), dict) else {}
    entries = summary.get("search_trajectory") or search.get("trajectory") or []
    rows, best = [], None
    for index, entry in enumerate(e for e in entries if isinstance(e, dict)):
        cost = _first_number(entry, ("cost", "makespan_us", "best_cost"))
        if entry.get("status", "kept") == "kept" and cost is not None:
            best = cost if best is None else min(best, cost)
        given_best = _first_number(entry, ("best_cost", "best_makespan_us"))
        rows.append({"iteration": entry.get("iteration", index), "cost": cost,
                     "best_cost": given_best if given_best is not None else best})
    return [row for row in rows if row["best_cost"] is not None]


def _first_number(entry: dict, keys) -> float | None:
    for key in keys:
        value = entry.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def run_header(run_file: str) -> dict:
    """The header of one run file (provenance and config), for the run page."""
    from harness.records.run_table import header_of

    path = Path(run_file)
    return header_of(path, path.read_bytes())


STEP_FIELDS = (("step", "float64"), ("verdict", "string"), ("speedup", "float64"), ("correct", "bool_"))


def transcripts(frame: pd.DataFrame) -> list:
    """Each row's refinement transcript (list of step dicts, or None), read from the details files
    of the rows' run files only (Arrow's reader with a schema of the step fields, or line by line
    where it refuses); for the figures, which need steps but not sources."""
    found: dict[tuple, list] = {}
    for run_file, rows in frame.groupby("run_file", sort=False):
        keys = set(rows["details"].dropna()) if "details" in rows else set()
        if keys:
            found.update({(run_file, k): v for k, v in _detail_steps(Path(run_file), keys).items()})
    return [found.get((f, k)) for f, k in zip(frame["run_file"], frame.get("details", [None] * len(frame)))]


def _detail_steps(run_file: Path, keys: set) -> dict:
    import pyarrow as pa
    import pyarrow.json as pj

    from harness.records.results import details_path, read_lines

    path = details_path(run_file)
    if not path.is_file():
        return {}
    step = pa.struct([(name, getattr(pa, kind)()) for name, kind in STEP_FIELDS])
    schema = pa.schema([("details", pa.string()), ("transcript", pa.list_(step))])
    try:
        table = pj.read_json(path, parse_options=pj.ParseOptions(explicit_schema=schema,
                                                                  unexpected_field_behavior="ignore"))
        rows = zip(table["details"].to_pylist(), table["transcript"].to_pylist())
    except Exception:  # a step of another shape: the tolerant reader
        rows = ((line.get("details"), line.get("transcript")) for line in read_lines(path))
    return {key: steps for key, steps in rows if key in keys and isinstance(steps, list)}
