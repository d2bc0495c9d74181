"""The leaderboard's data layer: run files to a light DataFrame, fast, without torch.

The summary columns of every record are read column-wise by pyarrow's JSON reader with an explicit
schema, which skips the heavy fields (candidate source, transcript, provenance) without building
them; a file pyarrow cannot read (a torn last line, a field of an unexpected type, no pyarrow)
falls back to the standard library reader. The drill-down reads one full record back from its
file on demand (``full_record``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness.errors import UserError
from harness.records.metrics import USAGE_FIELDS
from harness.records.results import attach_details, check_schema, find_run_files, read_lines

NUMBER_COLUMNS = (
    "level", "attempt", "candidate_ms", "candidate_ms_iqr", "eager_ms", "compile_ms", "speedup",
    "speedup_compile", "flops", "bytes", "sol_ms", "sol_fraction", "weights_loaded", "elapsed_s",
)
TEXT_COLUMNS = (
    "type", "run_id", "problem_id", "suite", "problem", "generator", "provider", "model",
    "candidate_sha", "status", "reason", "device", "precision", "size", "time", "excluded",
)
BOOL_COLUMNS = ("correct", "compiled", "degenerate", "imported")
LIST_COLUMNS = ("flags", "remarks")


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
    import pyarrow as pa

    from concurrent.futures import ThreadPoolExecutor

    files = find_run_files([runs_folder(results)])
    folder = cache_folder() if cache else None

    def read(path: Path):
        try:
            return (_cached_table(path, folder) if folder else _file_table(path)), None
        except UserError as error:
            return None, str(error)

    # Files are read side by side: pyarrow parses without the GIL, and one file is one or two
    # parse blocks, too few for its own threads to spread over the cores.
    with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1, len(files)))) as pool:
        outcomes = list(pool.map(read, files))  # in file order
    tables = [table for table, _ in outcomes if table is not None]
    warnings = [warning for _, warning in outcomes if warning]
    schema = _arrow_schema(with_header=True)
    table = pa.concat_tables(tables) if tables else schema.empty_table()
    return LoadResult(_to_frame(table), warnings, len(files))


CACHE_FORMAT = "leaderboard-columns/1"  # bump when the columns change


def cache_folder() -> Path | None:
    """``$CRUCIBLE_CACHE/leaderboard`` (default ``~/.cache/crucible``); None if it cannot be made."""
    root = Path(os.environ.get("CRUCIBLE_CACHE") or Path.home() / ".cache" / "crucible")
    try:
        (root / "leaderboard").mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return root / "leaderboard"


def _cached_table(path: Path, folder: Path):
    import hashlib

    import pyarrow as pa

    stat = path.stat()
    key = f"{CACHE_FORMAT}:{stat.st_size}:{stat.st_mtime_ns}".encode()
    # One entry per path as given (the run_file column holds it), replaced when the file changes.
    entry = folder / (hashlib.sha256(str(path).encode()).hexdigest()[:32] + ".arrow")
    try:
        with pa.memory_map(str(entry)) as source:
            table = pa.ipc.open_file(source).read_all()
        if (table.schema.metadata or {}).get(b"key") == key:
            return table.replace_schema_metadata(None)
    except (OSError, pa.ArrowInvalid):
        pass  # no entry yet, or an unreadable one: read the run file and write a fresh entry
    table = _file_table(path)
    _write_entry(entry, table.replace_schema_metadata({"key": key}))
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


def read_header(path: Path) -> dict:
    for line in read_lines(path):
        if line.get("type") == "header":
            check_schema(line.get("schema"), path)
            return line
        break
    raise UserError(f"{path}: first line is not a run header; is this a Crucible run file?")


def _file_table(path: Path):
    """One run file's records as an arrow table, with its header's facts as constant columns."""
    import pyarrow as pa
    import pyarrow.compute as pc

    header = read_header(path)
    try:
        table = _read_columns_pyarrow(path)
    except Exception:  # any pyarrow refusal: the tolerant reader below gives the same columns
        table = _read_columns_python(path)
    table = table.append_column("line_index", pa.array(range(table.num_rows), pa.int64()))
    table = table.filter(pc.equal(table["type"], "record"))
    provenance, config = header.get("provenance") or {}, header.get("config") or {}
    constants = {
        "run_file": str(path), "run_created": _text(header.get("created")),
        "hardware": _text(provenance.get("device") or config.get("device")),
        "run_imported": bool(header.get("imported", False)),
    }
    for name, value in constants.items():
        kind = pa.bool_() if isinstance(value, bool) else pa.string()
        table = table.append_column(name, pa.repeat(pa.scalar(value, kind), table.num_rows))
    for name, value in (("run_id", header.get("run_id")), ("suite", config.get("suite"))):
        if value is not None:
            table = table.set_column(table.schema.get_field_index(name), name,
                                     pc.fill_null(table[name], pa.scalar(str(value))))
    return table


def _text(value) -> str | None:
    return None if value is None else str(value)


def _arrow_schema(with_header: bool = False):
    import pyarrow as pa

    usage = pa.struct([(name, pa.float64()) for name in USAGE_FIELDS])
    fields = (
        [(name, pa.string()) for name in TEXT_COLUMNS]
        + [(name, pa.float64()) for name in NUMBER_COLUMNS]
        + [(name, pa.bool_()) for name in BOOL_COLUMNS]
        + [(name, pa.list_(pa.string())) for name in LIST_COLUMNS]
        + [("usage", usage)]
    )
    if with_header:
        fields += [("line_index", pa.int64()), ("run_file", pa.string()), ("run_created", pa.string()),
                   ("hardware", pa.string()), ("run_imported", pa.bool_())]
    return pa.schema(fields)


def _read_columns_pyarrow(path: Path):
    import pyarrow.json as pj

    options = pj.ParseOptions(explicit_schema=_arrow_schema(), unexpected_field_behavior="ignore")
    # 1 MiB blocks: a run file of a few MB is then parsed by several of pyarrow's threads at once
    return pj.read_json(path, parse_options=options, read_options=pj.ReadOptions(block_size=1 << 20))


def _read_columns_python(path: Path):
    """The same columns read line by line, each value coerced to its column's type or dropped."""
    import pyarrow as pa

    rows = [_coerced(line) for line in read_lines(path)]
    return pa.Table.from_pylist(rows, schema=_arrow_schema())


def _coerced(line: dict) -> dict:
    from harness.records.metrics import number

    row = {name: _text(line.get(name)) for name in TEXT_COLUMNS}
    row.update({name: number(line.get(name)) for name in NUMBER_COLUMNS})
    row.update({name: line[name] if isinstance(line.get(name), bool) else None for name in BOOL_COLUMNS})
    row.update({name: _text_list(line.get(name)) for name in LIST_COLUMNS})
    usage = line.get("usage") if isinstance(line.get("usage"), dict) else None
    row["usage"] = {name: number(usage.get(name)) for name in USAGE_FIELDS} if usage else None
    return row


def _text_list(value) -> list[str] | None:
    if isinstance(value, list):
        return [str(item) for item in value]
    return [value] if isinstance(value, str) and value else None


def _to_frame(table) -> pd.DataFrame:
    """Arrow to pandas once for all files; usage flattened to columns, flags counted in arrow."""
    import pyarrow.compute as pc

    flagged = pc.fill_null(pc.greater(pc.list_value_length(table["flags"]), 0), False)
    table = table.flatten()
    table = table.rename_columns([name.removeprefix("usage.") for name in table.column_names])
    table = table.append_column("flagged", flagged)
    frame = table.to_pandas()
    for name in ("level", "attempt"):
        frame[name] = frame[name].astype("Int64")
    for name in ("imported", "correct", "run_imported"):
        frame[name] = frame[name].fillna(False).astype(bool)
    frame["imported"] = frame["imported"] | frame["run_imported"]
    frame["ranked"] = ~frame["flagged"] & ~frame["imported"]
    frame["tokens"] = frame["input_tokens"] + frame["output_tokens"]
    return frame


def records_of(frame: pd.DataFrame) -> list[dict]:
    """Rows as dicts (the shape ``harness.records.metrics`` reads), NaN left for metrics to treat as missing."""
    columns = list(frame.columns)
    values = [frame[name].tolist() for name in columns]
    return [dict(zip(columns, row)) for row in zip(*values)]


def full_record(run_file: str, line_index: int, problem_id: str | None = None) -> dict:
    """The complete record (source, transcript, provenance) behind one row of the frame."""
    for index, line in enumerate(_nonblank_lines(run_file)):
        if index == line_index:
            record = json.loads(line)
            if problem_id is None or record.get("problem_id") == problem_id:
                return attach_details(run_file, [record])[0]
            break
    raise UserError(f"{run_file}: record {line_index} ({problem_id}) not found; was the file rewritten?")


def _nonblank_lines(path: str):
    with open(path) as handle:
        for line in handle:
            if line.strip():
                yield line


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
