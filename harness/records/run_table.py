"""Run files to one Arrow table of the summary columns, fast and tolerant (no torch, no pandas).

pyarrow's JSON reader parses a file's records column-wise with an explicit schema, skipping the
bulky fields without building them. A file it refuses (a torn or non-UTF-8 line, a line that is
not an object, a field of an unexpected type) is read line by line instead: every bad line becomes
a warning naming the file and line, and every good record is kept. A file that cannot be read at
all (no header, a future schema) is a warning too, and the other files are still read.

``line_index`` is the record's physical line in its file (0-based, blank lines counted), so a
drill-down finds the same line whatever was skipped around it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import UserError
from harness.records.metrics import CI_FIELDS, NON_MODEL_FIELDS, USAGE_FIELDS, number
from harness.records.schema import check_schema

NUMBER_COLUMNS = (
    "level", "attempt", "candidate_ms", "candidate_ms_iqr", "candidate_n", "eager_ms", "compile_ms", "speedup",
    "speedup_compile", "speedup_n", "flops", "bytes", "sol_ms", "sol_fraction", "elapsed_s",
)
TEXT_COLUMNS = (
    "type", "run_id", "problem_id", "suite", "problem", "generator", "provider", "model", "candidate_sha",
    "status", "reason", "device", "precision", "size", "time", "excluded", "speed_verdict",
    "speed_verdict_compile", "details", *NON_MODEL_FIELDS,
)
BOOL_COLUMNS = ("correct", "compiled", "degenerate", "imported")
LIST_COLUMNS = ("flags", "remarks")
HEADER_COLUMNS = ("line_index", "run_file", "run_created", "run_commit", "hardware", "run_imported", "timer",
                  "settings")


@dataclass
class TableResult:
    """The records' summary columns, plus what could not be read and why."""

    table: object  # a pyarrow.Table
    warnings: list[str] = field(default_factory=list)
    files: int = 0


def arrow_schema(with_header: bool = False):
    import pyarrow as pa

    usage = pa.struct([(name, pa.float64()) for name in USAGE_FIELDS])
    fields = ([(name, pa.string()) for name in TEXT_COLUMNS] + [(name, pa.float64()) for name in NUMBER_COLUMNS]
              + [(name, pa.bool_()) for name in BOOL_COLUMNS] + [(name, pa.list_(pa.string())) for name in LIST_COLUMNS]
              + [(name, pa.list_(pa.float64())) for name in CI_FIELDS] + [("usage", usage)])
    if with_header:
        fields += [("line_index", pa.int64())] + [(name, pa.string()) for name in HEADER_COLUMNS[1:]]
        fields[-3] = ("run_imported", pa.bool_())
    return pa.schema(fields)


def header_of(path: Path, data: bytes) -> dict:
    """The run header (first non-blank line), schema checked; UserError naming the file if not."""
    for number_, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            line = None
        if not isinstance(line, dict) or line.get("type") != "header":
            raise UserError(f"{path}:{number_}: first line is not a run header; is this a Crucible run file?")
        check_schema(line.get("schema"), path)
        return line
    raise UserError(f"{path}: empty file; is this a Crucible run file?")


def file_table(path: Path, warnings: list[str]):
    """One run file's records as an Arrow table with its header's facts as constant columns."""
    import pyarrow as pa
    import pyarrow.compute as pc

    data = Path(path).read_bytes()
    header = header_of(path, data)
    table = None
    if b"\n\n" not in data and data.endswith(b"\n") and _utf8(data):  # one line per row: row i is line i
        try:
            table = _read_pyarrow(data)
            table = table.append_column("line_index", pa.array(range(table.num_rows), pa.int64()))
        except Exception:  # any refusal: the tolerant reader below names the bad lines
            table = None
    if table is None:
        table = _read_python(path, data, warnings)
    table = table.filter(pc.fill_null(pc.equal(table["type"], "record"), False))
    for name, value in _header_facts(path, header).items():
        kind = pa.bool_() if isinstance(value, bool) else pa.string()
        table = table.append_column(name, pa.repeat(pa.scalar(value, kind), table.num_rows))
    config = header.get("config") or {}
    for name in ("run_id", "suite", "size", "precision"):
        value = header.get("run_id") if name == "run_id" else config.get(name)
        if value is not None:
            table = table.set_column(table.schema.get_field_index(name), name,
                                     pc.fill_null(table[name], pa.scalar(str(value))))
    return table


def _utf8(data: bytes) -> bool:
    """pyarrow passes invalid UTF-8 inside strings through; such a file takes the line reader."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _header_facts(path: Path, header: dict) -> dict:
    provenance, config = header.get("provenance") or {}, header.get("config") or {}
    options = config.get("generator_options")
    return {
        "run_file": str(path), "run_created": _text(header.get("created")),
        "run_commit": _text(provenance.get("git_commit")),
        "hardware": _text(provenance.get("device") or config.get("device")),
        "run_imported": bool(header.get("imported", False)), "timer": _text(config.get("timer")),
        "settings": json.dumps(options, sort_keys=True, default=str) if options else None,
    }


def _read_pyarrow(data: bytes):
    import pyarrow as pa
    import pyarrow.json as pj

    options = pj.ParseOptions(explicit_schema=arrow_schema(), unexpected_field_behavior="ignore")
    return pj.read_json(pa.BufferReader(data), parse_options=options,
                        read_options=pj.ReadOptions(block_size=1 << 20))


def _read_python(path: Path, data: bytes, warnings: list[str]):
    """Line by line: each bad line is a warning with its number, each good one a row."""
    import pyarrow as pa

    rows, lines = [], data.split(b"\n")
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        problem = None
        try:
            line = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as error:
            problem = f"not UTF-8 (byte {error.start})"
        except json.JSONDecodeError as error:
            torn = index >= len(lines) - 2 and not data.endswith(b"\n")
            problem = "torn last line (a writer was killed)" if torn else f"not valid JSON ({error.msg})"
        else:
            if not isinstance(line, dict):
                problem = f"a JSON {type(line).__name__}, not an object"
        if problem:
            warnings.append(f"{path}:{index + 1}: {problem}; line skipped, the file's other records kept")
            continue
        rows.append({**_coerced(line), "line_index": index})
    schema = arrow_schema().append(__import__("pyarrow").field("line_index", pa.int64()))
    return pa.Table.from_pylist(rows, schema=schema)


def _coerced(line: dict) -> dict:
    row = {name: _text(line.get(name)) for name in TEXT_COLUMNS}
    for name in NON_MODEL_FIELDS:  # a flag written as true/false or as a reason: text only when set
        row[name] = _text(line.get(name)) if line.get(name) not in (None, False, "", 0) else None
    row.update({name: number(line.get(name)) for name in NUMBER_COLUMNS})
    row.update({name: line[name] if isinstance(line.get(name), bool) else None for name in BOOL_COLUMNS})
    row.update({name: _text_list(line.get(name)) for name in LIST_COLUMNS})
    for name in CI_FIELDS:
        value = line.get(name)
        ok = isinstance(value, list) and len(value) == 2 and all(number(v) is not None for v in value)
        row[name] = [float(v) for v in value] if ok else None
    usage = line.get("usage") if isinstance(line.get("usage"), dict) else None
    row["usage"] = {name: number(usage.get(name)) for name in USAGE_FIELDS} if usage else None
    return row


def _text(value) -> str | None:
    return None if value is None else str(value)


def _text_list(value) -> list[str] | None:
    if isinstance(value, list):
        return [str(item) for item in value]
    return [value] if isinstance(value, str) and value else None


def read_tables(files: list[Path], reader=None) -> TableResult:
    """Every file's table (``reader(path, warnings)``, default ``file_table``) side by side in
    threads (pyarrow parses without the GIL), concatenated in file order; a file that cannot be
    read is a warning."""
    import pyarrow as pa
    from concurrent.futures import ThreadPoolExecutor

    reader = reader or file_table

    def read(path: Path):
        notes: list[str] = []
        try:
            return reader(path, notes), notes
        except UserError as error:
            return None, notes + [f"{error}; file skipped, the other files kept"]
        except OSError as error:
            return None, notes + [f"{path}: cannot be read ({error}); file skipped"]

    with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1, len(files) or 1))) as pool:
        outcomes = list(pool.map(read, files))
    tables = [table for table, _ in outcomes if table is not None]
    warnings = [note for _, notes in outcomes for note in notes]
    table = pa.concat_tables(tables) if tables else arrow_schema(with_header=True).empty_table()
    return TableResult(table, warnings, len(files))


def to_frame(table):
    """Arrow to pandas once for all files: usage flattened, intervals split into ``<name>_lo`` and
    ``<name>_hi``, ``flagged`` counted in Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    flagged = pc.fill_null(pc.greater(pc.list_value_length(table["flags"]), 0), False)
    for name in CI_FIELDS:
        pairs = pc.if_else(pc.equal(pc.fill_null(pc.list_value_length(table[name]), 0), 2), table[name],
                           pa.scalar(None, table.schema.field(name).type))
        table = table.append_column(f"{name}_lo", pc.list_element(pairs, 0))
        table = table.append_column(f"{name}_hi", pc.list_element(pairs, 1))
        table = table.drop_columns([name])
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
