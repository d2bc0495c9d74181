"""The KernelBench suite's manifest: one row per problem, generated from the problem files.

    python -m harness.problems.manifest build [--upstream-table PROBLEMS.md]   # rewrite manifest.csv and EXCLUDED.md
    python -m harness.problems.manifest check [--skip-full-size]               # exit 1 if either is stale

Each row holds the problem's identity, its small size, its work at full size (FLOPs and minimum
bytes, counted on the meta device, so nothing is allocated), the fixes applied versus upstream, its
exclusion, and what the harness's degeneracy probe finds. The probe runs exactly as the judge runs
it (harness.judge.reference.ReferenceEnv, harness.judge.checks.DegeneracyProbe) with a fixed secret, so the
result is the same on every build.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.problems.problem import load_problem, read_metadata
from harness.problems.suite import LEVELS, SUITE_ROOT, problem_files

MANIFEST_PATH = SUITE_ROOT / "manifest.csv"
EXCLUDED_PATH = SUITE_ROOT / "EXCLUDED.md"
# The named kinds of fix (docs/INTERFACES.md §1); "other" stays in the fixes JSON only.
FIX_KINDS = ("input_distribution", "degenerate_output", "dropout", "rng_in_forward", "integer_inputs",
             "hardcoded_precision")
COLUMNS = ("problem_id", "level", "id", "name", "upstream_name", "small_size", "full_flops", "full_bytes",
           "flops_method", "fixes", *(f"fix_{kind}" for kind in FIX_KINDS), "excluded", "exclusion_reason",
           "degenerate_probe", "degenerate_probe_1e2", "probe_size", "degenerate_probe_full",
           "degenerate_probe_full_1e2", "small_reference_ms")
# Machine-dependent, for information only: never compared.
VOLATILE = ("small_reference_ms",)
# Columns that need the full size: counting an LSTM's 512 steps on the meta device alone takes
# tens of seconds, so `check --skip-full-size` leaves them out.
FULL_SIZE_COLUMNS = ("full_flops", "full_bytes", "flops_method", "probe_size", "degenerate_probe_full",
                     "degenerate_probe_full_1e2")
BOOL_COLUMNS = ("excluded", *(f"fix_{kind}" for kind in FIX_KINDS))
INT_COLUMNS = ("level", "id", "full_flops", "full_bytes")
JSON_COLUMNS = ("small_size", "fixes")

PROBE_SECRET = 0        # a fixed run secret: every build draws the same weights and inputs
PROBE_TRIALS = 3        # the judge probes its first three correctness trials
PROBE_TOLERANCES = {"": 1e-4, "_1e2": 1e-2}   # column suffix -> atol = rtol (fp32's and the half types')
# The probe also runs at full size when that is cheap on a CPU (a few seconds): few bytes and FLOPs.
FULL_PROBE_MAX_BYTES = 64 * 2**20
FULL_PROBE_MAX_FLOPS = 10 * 10**9
NOT_RUN = "not run"


# ---------------------------------------------------------------- building rows


def build_rows(upstream: dict[tuple[int, int], str], root: Path | None = None, levels=LEVELS,
               full_size: bool = True, progress=None) -> list[dict[str, Any]]:
    """One row per problem file under ``root`` (the shipped suite by default), in level and id order.

    ``upstream`` maps (level, id) to the upstream name. Without ``full_size`` the full-size
    columns are left empty (None)."""
    rows = []
    with _one_thread():
        for level, path in problem_files(levels=levels, kernelbench_root=root):
            rows.append(problem_row(level, path, upstream, full_size))
            if progress:
                progress(rows[-1])
    return rows


def problem_row(level: int, path: Path, upstream: dict[tuple[int, int], str], full_size: bool = True) -> dict:
    row = identity_columns(level, path, upstream)
    small = load_problem(path, size="small", level=level)
    found, best_ms = probe(small)
    row.update({f"degenerate_probe{suffix}": _probe_text(found[suffix]) for suffix in PROBE_TOLERANCES})
    row["small_reference_ms"] = best_ms
    row.update(dict.fromkeys(FULL_SIZE_COLUMNS))
    if full_size:
        row.update(full_size_columns(level, path))
    return row


def identity_columns(level: int, path: Path, upstream: dict[tuple[int, int], str]) -> dict:
    """Identity, small size, fixes and exclusion: read from the file without running it."""
    metadata = read_metadata(path.read_text(), path)
    match = re.fullmatch(r"(\d+)_(.+)", path.stem)
    if not match:
        raise UserError(f"{path}: a suite's problem files are named <id>_<Name>.py (e.g. 19_ReLU.py); rename it")
    number, name = match.groups()
    fixes = metadata.get("FIXES") or {}
    exclude = metadata.get("EXCLUDE")
    row = {"problem_id": f"L{level}/{path.stem}", "level": level, "id": int(number), "name": name,
           "upstream_name": upstream.get((level, int(number)), ""), "small_size": metadata.get("SMALL") or {},
           "fixes": fixes}
    row.update({f"fix_{kind}": kind in fixes for kind in FIX_KINDS})
    row.update(excluded=exclude is not None, exclusion_reason=exclude or "")
    return row


def probe(problem) -> tuple[dict[str, list[str]], float]:
    """The degeneracy probe at each tolerance over the judge's first trials, and the fastest
    reference call in milliseconds. Inputs and expected outputs come from ReferenceEnv, as in a run."""
    from harness.judge.checks import DegeneracyProbe
    from harness.judge.reference import ReferenceEnv

    env = ReferenceEnv(problem, "cpu", "fp32", secret=PROBE_SECRET)
    probes = {suffix: DegeneracyProbe(tol, tol) for suffix, tol in PROBE_TOLERANCES.items()}
    best = float("inf")
    for trial in range(PROBE_TRIALS):
        inputs = env.make_inputs(env.trial_seed(trial))
        start = time.perf_counter()
        expected = env.expected(inputs)
        best = min(best, 1e3 * (time.perf_counter() - start))
        for each in probes.values():
            each.update(expected, inputs)
    return {suffix: each.found() for suffix, each in probes.items()}, best


def full_size_columns(level: int, path: Path) -> dict:
    full = load_problem(path, size="full", level=level)
    flops, nbytes, method = count_full_size(full)
    columns = {"full_flops": flops, "full_bytes": nbytes, "flops_method": method, "probe_size": "small",
               "degenerate_probe_full": NOT_RUN, "degenerate_probe_full_1e2": NOT_RUN}
    if method == "meta" and nbytes <= FULL_PROBE_MAX_BYTES and flops <= FULL_PROBE_MAX_FLOPS:
        found, _ = probe(full)
        columns["probe_size"] = "small,full"
        columns.update({f"degenerate_probe_full{suffix}": _probe_text(found[suffix]) for suffix in PROBE_TOLERANCES})
    return columns


def count_full_size(problem) -> tuple[int | None, int | None, str]:
    """FLOPs (torch's FlopCounterMode: matmuls, convolutions, attention; pointwise ops count 0) and
    minimum bytes (harness.judge.sol.minimum_bytes, at the file's own dtypes) of one forward at full size,
    on the meta device: shapes flow, nothing is allocated. Where an op has no meta kernel the counts
    are left empty and the method says why; no number is estimated."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from harness.judge import sol

    module = problem.module()
    counter = FlopCounterMode(display=False)
    try:
        with torch.device("meta"), torch.no_grad():
            model = module.Model(*module.get_init_inputs())
            inputs = list(module.get_inputs())
            with counter:
                output = model(*inputs)
            nbytes = sol.minimum_bytes(model, inputs, output)
    except Exception as error:  # any op without a meta kernel, or data-dependent Python on tensor values
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return None, None, f"unavailable: {type(error).__name__}: {message}"[:300]
    return int(counter.get_total_flops()), int(nbytes), "meta"


def _probe_text(found: list[str]) -> str:
    return ",".join(found) if found else "none"


@contextlib.contextmanager
def _one_thread():
    """One intra-op thread: small problems gain nothing from more, and results do not then depend
    on the machine's core count."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


# ---------------------------------------------------------------- upstream names


def parse_upstream_table(path: str | Path) -> dict[tuple[int, int], str]:
    """(level, id) -> name from the problem tables of a PROBLEMS.md (sections '## levelN', rows '| id | name | ...')."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"--upstream-table {path}: no such file; pass the PROBLEMS.md that lists the upstream problems")
    names, level = {}, None
    for line in path.read_text().splitlines():
        heading = re.match(r"^##\s+level\s*(\d+)", line, re.IGNORECASE)
        if heading:
            level = int(heading.group(1))
        cells = re.match(r"^\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|", line)
        if cells and level is not None:
            names[(level, int(cells.group(1)))] = cells.group(2)
    if not names:
        raise UserError(f"--upstream-table {path}: no '## levelN' tables with '| id | name |' rows found")
    return names


def committed_upstream_names(path: Path = MANIFEST_PATH) -> dict[tuple[int, int], str]:
    """The upstream names recorded in a manifest: the record to carry forward when no table is given."""
    if not path.is_file():
        return {}
    return {(row["level"], row["id"]): row["upstream_name"] for row in read_manifest(path)}


def upstream_names(table: str | Path | None, manifest: Path = MANIFEST_PATH) -> dict[tuple[int, int], str]:
    if table is not None:
        return parse_upstream_table(table)
    names = committed_upstream_names(manifest)
    if not names:
        raise UserError(f"{manifest} holds no upstream names to carry forward; pass --upstream-table PROBLEMS.md")
    return names


# ---------------------------------------------------------------- CSV text, reading


def cell(column: str, value: Any) -> str:
    """The CSV text of one value: booleans as true/false, dicts as JSON, empty for None."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if column in JSON_COLUMNS:
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def csv_text(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([cell(column, row.get(column)) for column in COLUMNS])
    return out.getvalue()


def read_manifest_text(path: Path = MANIFEST_PATH) -> list[dict[str, str]]:
    """The manifest's rows as the strings in the file."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no manifest; build it with: python -m harness.problems.manifest build")
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [column for column in COLUMNS if column not in (reader.fieldnames or [])]
        if missing:
            raise UserError(f"{path}: columns {', '.join(missing)} are missing; rebuild it with: "
                            "python -m harness.problems.manifest build")
        return list(reader)


def read_manifest(path: Path = MANIFEST_PATH) -> list[dict[str, Any]]:
    """The manifest's rows with typed values: ints, booleans, dicts (JSON), None for empty cells."""
    return [{column: _parse(column, text) for column, text in row.items()} for row in read_manifest_text(path)]


def _parse(column: str, text: str) -> Any:
    if column in BOOL_COLUMNS:
        return text == "true"
    if column in JSON_COLUMNS:
        return json.loads(text)
    if column in INT_COLUMNS:
        return int(text) if text else None
    if column == "small_reference_ms":
        return float(text) if text else None
    return text


# ---------------------------------------------------------------- EXCLUDED.md


def excluded_markdown(rows: list[dict]) -> str:
    """The generated list of excluded problems with reasons, and any probe finding not excluded."""
    excluded = [row for row in rows if row["excluded"]]
    lines = ["# KernelBench problems excluded from ranking", "",
             "Generated by `python -m harness.problems.manifest build` from the problem files' `EXCLUDE` strings and",
             "the manifest's degeneracy probe (suites/kernelbench/manifest.csv); do not edit by hand.",
             "An excluded problem still runs; its records carry the reason in their `excluded` field, so",
             "that rankings and fast_p can leave it out.", "",
             f"{len(excluded)} of {len(rows)} problems are excluded.", ""]
    if excluded:
        lines += ["| problem | probe at 1e-4 | probe at 1e-2 | reason |", "| --- | --- | --- | --- |"]
        lines += [f"| {row['problem_id']} | {_probe_summary(row, '')} | {_probe_summary(row, '_1e2')} | "
                  f"{_md_cell(row['exclusion_reason'])} |" for row in excluded]
        lines.append("")
    unexcluded = [row for row in rows if not row["excluded"] and _flagged(row)]
    lines += ["## Probe findings on problems that are not excluded", ""]
    if unexcluded:
        lines += ["The harness's probe finds a trivial answer that passes on these problems; each needs a fix",
                  "in its file or an exclusion.", "",
                  "| problem | probe at 1e-4 | probe at 1e-2 |", "| --- | --- | --- |"]
        lines += [f"| {row['problem_id']} | {_probe_summary(row, '')} | {_probe_summary(row, '_1e2')} |"
                  for row in unexcluded]
    else:
        lines.append("None: at 1e-4 and at 1e-2, on every size probed, no trivial answer passes a problem that is "
                     "not excluded.")
    return "\n".join(lines) + "\n"


def _flagged(row: dict) -> bool:
    values = [row.get(f"degenerate_probe{size}{suffix}") for size in ("", "_full") for suffix in PROBE_TOLERANCES]
    return any(value not in (None, "", "none", NOT_RUN) for value in values)


def _probe_summary(row: dict, suffix: str) -> str:
    small = row.get(f"degenerate_probe{suffix}")
    full = row.get(f"degenerate_probe_full{suffix}")
    return f"small: {small}" + (f"; full: {full}" if full not in (None, "", NOT_RUN) else "")


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# ---------------------------------------------------------------- build and check


def write(rows: list[dict], manifest: Path = MANIFEST_PATH, excluded: Path = EXCLUDED_PATH) -> None:
    Path(manifest).write_text(csv_text(rows))
    Path(excluded).write_text(excluded_markdown(rows))


def stale_cells(committed: list[dict[str, str]], built: list[dict], skip: tuple[str, ...] = ()) -> list[str]:
    """Where the committed manifest (strings, as read) differs from freshly built rows."""
    compared = [column for column in COLUMNS if column not in VOLATILE and column not in skip]
    old = {row["problem_id"]: row for row in committed}
    new = {row["problem_id"]: row for row in built}
    problems = [f"{pid}: in the manifest, but no problem file" for pid in old if pid not in new]
    problems += [f"{pid}: a problem file without a manifest row" for pid in new if pid not in old]
    for pid in (pid for pid in new if pid in old):
        for column in compared:
            want, have = cell(column, new[pid].get(column)), old[pid].get(column, "")
            if want != have:
                problems.append(f"{pid}: {column} is {have!r} in the manifest; the files give {want!r}")
    return problems


def check(manifest: Path = MANIFEST_PATH, excluded: Path = EXCLUDED_PATH, upstream=None, root: Path | None = None,
          levels=LEVELS, skip_full_size: bool = False) -> list[str]:
    """Every way the committed manifest and EXCLUDED.md differ from what the builder produces now."""
    committed = read_manifest_text(manifest)
    names = upstream if upstream is not None else committed_upstream_names(Path(manifest))
    built = build_rows(names, root=root, levels=levels, full_size=not skip_full_size)
    if skip_full_size:  # render EXCLUDED.md with the committed full-size findings
        by_id = {row["problem_id"]: row for row in committed}
        for row in (row for row in built if row["problem_id"] in by_id):
            row.update({c: _parse(c, by_id[row["problem_id"]][c]) for c in FULL_SIZE_COLUMNS})
    problems = stale_cells(committed, built, FULL_SIZE_COLUMNS if skip_full_size else ())
    excluded = Path(excluded)
    if not excluded.is_file() or excluded.read_text() != excluded_markdown(built):
        problems.append(f"{excluded}: not what the builder writes for these problems")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.problems.manifest", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="regenerate the manifest and EXCLUDED.md from the problem files")
    verify = sub.add_parser("check", help="exit 1 if the manifest or EXCLUDED.md is not what build would write")
    for each in (build, verify):
        each.add_argument("--out", "--manifest", dest="manifest", type=Path, default=MANIFEST_PATH,
                          help=f"the manifest CSV (default: {MANIFEST_PATH.relative_to(SUITE_ROOT.parent.parent)})")
        each.add_argument("--excluded", type=Path, default=EXCLUDED_PATH, help="the generated list of exclusions")
        each.add_argument("--upstream-table", default=None,
                          help="a PROBLEMS.md with the upstream tables to take upstream names from "
                               "(default: carry forward the manifest's upstream_name column)")
    verify.add_argument("--skip-full-size", action="store_true",
                        help="leave out the full-size columns (FLOPs, bytes, full-size probe), "
                             "which take minutes of meta-device runs")
    args = parser.parse_args(argv)
    try:
        return _build(args) if args.command == "build" else _check(args)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _build(args) -> int:
    names = upstream_names(args.upstream_table, args.manifest if args.manifest.is_file() else MANIFEST_PATH)
    start = time.perf_counter()
    rows = build_rows(names, progress=lambda row: print(f"{row['problem_id']}: probe {row['degenerate_probe']}, "
                                                        f"{row['flops_method']}", file=sys.stderr))
    write(rows, args.manifest, args.excluded)
    print(f"wrote {args.manifest} ({len(rows)} rows) and {args.excluded} in {time.perf_counter() - start:.0f} s")
    return 0


def _check(args) -> int:
    names = parse_upstream_table(args.upstream_table) if args.upstream_table else None
    problems = check(args.manifest, args.excluded, names, skip_full_size=args.skip_full_size)
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} difference(s); regenerate with: python -m harness.problems.manifest build")
        return 1
    print(f"{args.manifest} and {args.excluded} are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
