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
from harness.results import check_schema, find_run_files, read_lines

NUMBER_COLUMNS = (
    "level", "attempt", "candidate_ms", "candidate_ms_iqr", "eager_ms", "compile_ms", "speedup",
    "speedup_compile", "flops", "bytes", "sol_ms", "sol_fraction", "weights_loaded", "elapsed_s",
)
TEXT_COLUMNS = (
    "type", "run_id", "problem_id", "suite", "problem", "generator", "provider", "model",
    "candidate_sha", "status", "reason", "device", "precision", "size", "time",
)
BOOL_COLUMNS = ("correct", "compiled", "degenerate", "imported")
LIST_COLUMNS = ("flags", "remarks")
USAGE_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens", "cost_usd")
HEADER_COLUMNS = ("run_file", "line_index", "hardware", "run_created", "run_imported")
LIGHT_COLUMNS = TEXT_COLUMNS + NUMBER_COLUMNS + BOOL_COLUMNS + LIST_COLUMNS + ("usage",)


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


def load_frame(results: str | os.PathLike) -> LoadResult:
    """Every record under a results folder as a DataFrame of the light columns."""
    frames, warnings = [], []
    files = find_run_files([runs_folder(results)])
    for path in files:
        try:
            frames.append(_load_file(path))
        except UserError as error:
            warnings.append(str(error))
    frame = pd.concat(frames, ignore_index=True) if frames else _empty_frame()
    return LoadResult(_normalise(frame), warnings, len(files))


def _empty_frame() -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series(dtype=object) for name in LIGHT_COLUMNS + HEADER_COLUMNS})


def read_header(path: Path) -> dict:
    for line in read_lines(path):
        if line.get("type") == "header":
            check_schema(line.get("schema"), path)
            return line
        break
    raise UserError(f"{path}: first line is not a run header; is this a Crucible run file?")


def _load_file(path: Path) -> pd.DataFrame:
    header = read_header(path)
    try:
        frame = _read_columns_pyarrow(path)
    except Exception:  # any pyarrow refusal: the tolerant reader below gives the same columns
        frame = _read_columns_python(path)
    frame["line_index"] = range(len(frame))
    frame = frame[frame["type"] == "record"]
    provenance, config = header.get("provenance") or {}, header.get("config") or {}
    frame = frame.assign(
        run_file=str(path),
        run_created=header.get("created"),
        run_imported=bool(header.get("imported", False)),
        hardware=provenance.get("device") or config.get("device"),
    )
    frame["run_id"] = frame["run_id"].fillna(header.get("run_id"))
    frame["suite"] = frame["suite"].fillna(config.get("suite"))
    return frame


def _arrow_schema():
    import pyarrow as pa

    usage = pa.struct([(name, pa.float64()) for name in USAGE_FIELDS])
    return pa.schema(
        [(name, pa.string()) for name in TEXT_COLUMNS]
        + [(name, pa.float64()) for name in NUMBER_COLUMNS]
        + [(name, pa.bool_()) for name in BOOL_COLUMNS]
        + [(name, pa.list_(pa.string())) for name in LIST_COLUMNS]
        + [("usage", usage)]
    )


def _read_columns_pyarrow(path: Path) -> pd.DataFrame:
    import pyarrow.json as pj

    options = pj.ParseOptions(explicit_schema=_arrow_schema(), unexpected_field_behavior="ignore")
    table = pj.read_json(path, parse_options=options, read_options=pj.ReadOptions(block_size=1 << 24))
    frame = table.to_pandas()
    for name in LIST_COLUMNS:  # arrow hands back numpy arrays; records elsewhere carry lists
        frame[name] = [list(value) if value is not None else [] for value in frame[name]]
    return frame


def _read_columns_python(path: Path) -> pd.DataFrame:
    rows = []
    for line in read_lines(path):
        row = {name: line.get(name) for name in LIGHT_COLUMNS}
        row["usage"] = line["usage"] if isinstance(line.get("usage"), dict) else None
        rows.append(row)
    return pd.DataFrame(rows, columns=list(LIGHT_COLUMNS))


def _normalise(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.reset_index(drop=True)
    for name in NUMBER_COLUMNS:
        frame[name] = pd.to_numeric(frame[name], errors="coerce")
    for name in ("level", "attempt"):
        frame[name] = frame[name].astype("Int64")
    frame["imported"] = frame["imported"].fillna(False).astype(bool) | frame["run_imported"].fillna(False).astype(bool)
    frame["correct"] = frame["correct"].fillna(False).astype(bool)
    for name in LIST_COLUMNS:
        frame[name] = [value if isinstance(value, list) else [] for value in frame[name]]
    frame["flagged"] = frame["flags"].map(bool)
    frame["ranked"] = ~frame["flagged"] & ~frame["imported"]
    for name in USAGE_FIELDS:
        frame[name] = [(usage or {}).get(name) if isinstance(usage, dict) else None for usage in frame["usage"]]
        frame[name] = pd.to_numeric(frame[name], errors="coerce")
    frame["tokens"] = frame["input_tokens"] + frame["output_tokens"]
    return frame


def records_of(frame: pd.DataFrame) -> list[dict]:
    """Rows as dicts (the shape ``harness.metrics`` reads), NaN left for metrics to treat as missing."""
    columns = list(frame.columns)
    values = [frame[name].tolist() for name in columns]
    return [dict(zip(columns, row)) for row in zip(*values)]


def full_record(run_file: str, line_index: int, problem_id: str | None = None) -> dict:
    """The complete record (source, transcript, provenance) behind one row of the frame."""
    for index, line in enumerate(_nonblank_lines(run_file)):
        if index == line_index:
            record = json.loads(line)
            if problem_id is None or record.get("problem_id") == problem_id:
                return record
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
