"""Run files: an append-only JSON Lines file per run, a header then records, fsynced per line.

Readers need none of the writer's code: every line is a JSON object with a ``type`` (``header``,
``record``, ``baseline``) and the header carries the schema version. This module never imports
torch, so the leaderboard can use it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import secrets
from pathlib import Path
from typing import Any, Iterable, Iterator

from harness.errors import UserError

from harness.records.schema import SCHEMA, SCHEMA_MAJOR, check_schema  # noqa: F401  (re-exported: readers import them here)


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def new_run_id() -> str:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(3)}"


def run_file_name(run_id: str, suite: str, generator: str) -> str:
    safe = lambda text: "".join(c if c.isalnum() or c in "-_" else "-" for c in text)  # noqa: E731
    return f"{run_id}_{safe(suite)}_{safe(generator)}.jsonl"


# The bulky text of a record (candidate source, refinement transcript, tracebacks, worker output,
# profiles, the whole reason of a baseline that failed) goes to a details file beside the run file;
# the record keeps its key under "details".
# Run files stay small, so reading the summary columns of 100,000 records stays fast, and every
# reader below (read_run, load_records) puts the fields back: consumers see whole records.
DETAIL_FIELDS = ("candidate_source", "transcript", "traceback", "worker_output", "profile", "baseline_errors")
DETAILS_SUFFIX = ".details.ndjson"  # not *.jsonl: globs for run files must not pick it up


def details_path(run_file: str | os.PathLike) -> Path:
    """``X.jsonl`` -> ``X.details.ndjson``, beside it."""
    return Path(run_file).with_suffix(DETAILS_SUFFIX)


class RunWriter:
    """Appends one JSON object per line and fsyncs it, so a killed run loses nothing.

    Safe for several processes appending to the same file (pytest-xdist workers): each line is
    written with one ``write`` call on a file opened in append mode, which POSIX keeps whole for
    regular files, and the header is written only by whoever creates the file. A record's detail
    fields are written (and synced) to the details file before the record that points to them.
    """

    def __init__(self, path: str | os.PathLike, header: dict | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if header is not None and not self._create_with_header(header):
            self._note_resume(header)

    def _create_with_header(self, header: dict) -> bool:
        """Write the header line of a new file; False where the file exists already."""
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False  # another worker of this run, or an earlier run this one resumes, wrote it
        body = {"type": "header", "schema": SCHEMA, "created": utc_now(), **header}
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps(body, default=_jsonable) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        return True

    def _note_resume(self, header: dict) -> None:
        """A run that appends to an earlier run's file says once who it is: its own provenance
        (machine, versions, commit) and config, in a ``resume`` line. Without it, records a later
        run appended would carry the first run's commit and machine."""
        run_id, segments = header.get("run_id"), run_segments(self.path)
        # No header yet: another xdist worker of this run is creating the file. This run's id among
        # them: the file's own run, or another worker of this resumed run wrote the line already.
        if run_id is None or not segments or run_id in segments:
            return
        body = {"type": "resume", "schema": SCHEMA, "created": utc_now(), **header}
        _append_line(self.path, json.dumps(body, default=_jsonable) + "\n")

    def append(self, record: dict, kind: str = "record") -> None:
        record, details = split_details(record) if kind == "record" else (record, None)
        if details:
            _append_line(details_path(self.path), json.dumps(details, default=_jsonable) + "\n")
        _append_line(self.path, json.dumps({"type": kind, **record}, default=_jsonable) + "\n")


def split_details(record: dict) -> tuple[dict, dict | None]:
    """(the record as the run file keeps it, its details line or None when it has nothing bulky)."""
    details = {k: record[k] for k in DETAIL_FIELDS if record.get(k) not in (None, "", [], {})}
    if not details:
        return record, None
    key = secrets.token_hex(8)
    return {**{k: v for k, v in record.items() if k not in details}, "details": key}, {"details": key, **details}


def _append_line(path: Path, line: str) -> None:
    with open(path, "a") as handle:
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())


def attach_details(run_file: str | os.PathLike, records: list[dict]) -> list[dict]:
    """Put each record's detail fields back from the details file (in place; returned for chaining).

    A record whose details are missing (the file was not copied along) keeps ``details`` and gets
    ``details_missing: true``, so a drill-down can say why its source is absent."""
    wanted = {r["details"] for r in records if isinstance(r.get("details"), str)}
    if not wanted:
        return records
    found: dict[str, dict] = {}
    path = details_path(run_file)
    if path.is_file():
        for line in read_lines(path):
            key = line.get("details")
            if key in wanted:
                found[key] = line
    for record in records:
        key = record.get("details")
        if isinstance(key, str):
            extra = found.get(key)
            if extra is None:
                record["details_missing"] = True
            else:
                record.update({k: v for k, v in extra.items() if k in DETAIL_FIELDS})
    return records


def _jsonable(value: Any) -> Any:
    """Fallback encoder: numbers from numpy/torch, paths, sets and dataclasses become JSON."""
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return value.to_dict()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


class RunFileWarning(UserWarning):
    """A line or file of the results that could not be read; the message names file and line."""


def read_lines(path: str | os.PathLike, numbered: bool = False) -> Iterator:
    """Every well-formed object line of a run file (``(line_index, line)`` pairs with ``numbered``,
    0-based physical lines). A torn, non-UTF-8 or non-object line is skipped with a
    ``RunFileWarning`` naming the file and line, so the file's other records are kept."""
    import warnings

    with open(path, "rb") as handle:
        for index, raw in enumerate(handle):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as error:
                why = "not UTF-8" if isinstance(error, UnicodeDecodeError) else "not valid JSON (a torn line?)"
                warnings.warn(f"{path}:{index + 1}: {why}; line skipped", RunFileWarning, stacklevel=2)
                continue
            if not isinstance(line, dict):
                warnings.warn(f"{path}:{index + 1}: not a JSON object; line skipped", RunFileWarning, stacklevel=2)
                continue
            yield (index, line) if numbered else line


def read_run(path: str | os.PathLike) -> tuple[dict, list[dict]]:
    """The header and the records (type ``record``) of one run file, schema checked."""
    header: dict | None = None
    records: list[dict] = []
    for line in read_lines(path):
        kind = line.get("type")
        if kind == "header" and header is None:
            check_schema(line.get("schema"), path)
            header = line
        elif kind == "record":
            records.append(line)
    if header is None:
        raise UserError(f"{path}: no header line; is this a Crucible run file?")
    return header, attach_details(path, records)


def find_run_files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Run files named directly or found (recursively) under the given folders, in name order."""
    found: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            found.extend(sorted(path.rglob("*.jsonl")))  # details files (.ndjson) are not run files
        elif path.exists():
            found.append(path)
        else:
            raise UserError(f"{path}: no such run file or folder")
    return found


def run_segments(path: str | os.PathLike) -> dict[str, dict]:
    """The runs that wrote to one file, by run id: its header, then one ``resume`` line for each
    later run that appended to it (``--resume``). Each has that run's provenance and config."""
    segments: dict[str, dict] = {}
    if not Path(path).exists():
        return segments
    for line in read_lines(path):
        if line.get("type") in ("header", "resume") and line.get("run_id") is not None:
            segments.setdefault(str(line["run_id"]), line)
    return segments


# Config a resumed run must share with the file it appends to: records that differ in any of these
# are not one run's figures (another precision, size, device or generator setting).
RESUME_MUST_MATCH = ("suite", "generator", "generator_options", "precision", "size", "device", "trials",
                     "tolerance", "compile_baseline", "flags", "timer", "seeds")


def resume_conflicts(existing: dict, new: dict) -> list[str]:
    """Why a run with header ``new`` must not append to a file whose header is ``existing``: a list
    of ``what: file has X, this run Y`` (empty: it may). Keys one side lacks are not compared."""
    conflicts = []
    old_device = (existing.get("provenance") or {}).get("device")
    new_device = (new.get("provenance") or {}).get("device")
    if old_device and new_device and old_device != new_device:
        conflicts.append(f"machine: the file was recorded on {old_device!r}, this run is on {new_device!r}")
    old_config, new_config = existing.get("config") or {}, new.get("config") or {}
    for key in RESUME_MUST_MATCH:
        if key in old_config and key in new_config and old_config[key] != new_config[key]:
            conflicts.append(f"{key}: the file has {old_config[key]!r}, this run {new_config[key]!r}")
    return conflicts


def load_records(paths: Iterable[str | os.PathLike]) -> list[dict]:
    """All records of the given run files, with the file's facts under ``run_*`` keys; ``run_commit``
    and ``hardware`` come from the run that wrote the record (the header, or the ``resume`` line of
    a run that appended to the file)."""
    import warnings

    rows: list[dict] = []
    for path in find_run_files(paths):
        try:
            header, records = read_run(path)
        except UserError as error:  # one unreadable file must not hide the others
            warnings.warn(f"{error}; file skipped", RunFileWarning, stacklevel=2)
            continue
        segments = run_segments(path)
        config = header.get("config", {})
        for record in records:
            row = dict(record)
            row.setdefault("run_id", header.get("run_id"))
            segment = segments.get(str(row["run_id"]), header)
            provenance = segment.get("provenance") or header.get("provenance") or {}
            row["run_file"] = str(path)
            row["run_created"] = header.get("created")
            row["run_commit"] = provenance.get("git_commit")
            row["hardware"] = provenance.get("device", row.get("device"))
            row.setdefault("imported", bool(header.get("imported", False)))
            row.setdefault("suite", config.get("suite"))
            row["run_timer"] = config.get("timer")
            rows.append(row)
    return rows


def load_runs(*paths, details: bool = False, warn: bool = True):
    """One line to pandas: ``load_runs("results/runs")`` (or a list of files and folders) -> a
    DataFrame with a row per record.

    Without ``details`` (fast: 100,000 records in a second or two) the columns are the summary
    fields of docs/INTERFACES.md §5 (verdict, timings, intervals split into ``<name>_lo`` and
    ``<name>_hi``, usage flattened) plus the run's facts (``run_file``, ``line_index``,
    ``hardware``, ``timer``, ``settings``, ...); score them with ``harness.records.boards.boards``. With
    ``details`` every field of every record, detail files included (``load_records``).
    Unreadable lines and files are skipped with a ``RunFileWarning`` naming file and line."""
    import warnings

    import pandas as pd

    flat = [item for path in (paths or ("results/runs",))
            for item in (path if isinstance(path, (list, tuple, set)) else [path])]
    if details:
        return pd.DataFrame(load_records(flat))
    from harness.records import run_table

    result = run_table.read_tables(find_run_files(flat))
    if warn:
        for note in result.warnings:
            warnings.warn(note, RunFileWarning, stacklevel=2)
    return run_table.to_frame(result.table)


def completed_keys(path: str | os.PathLike) -> set[tuple]:
    """Keys (problem_id, generator, attempt) already recorded in a run file, for ``--resume``."""
    if not Path(path).exists():
        return set()
    return {
        (line.get("problem_id"), line.get("generator"), line.get("attempt", 0))
        for line in read_lines(path)
        if line.get("type") == "record"
    }
