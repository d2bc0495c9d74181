"""``python -m harness publish FILE``: copy one of your runs into ``results/``, where the leaderboard reads.

Runs are written to a local folder git ignores (``runs/`` by default); nothing reaches the tracked
``results/`` tree except through this command. A run file (``*.jsonl``) goes to
``results/runs/`` with its details file; a megakernel summary (``*.json`` with the megakernel
summary schema) becomes ``results/megakernel/summary.json``. A file already published with the
same content is left as it is; one with the same name and other content is refused.
"""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path

from harness.errors import UserError

MEGAKERNEL_SUMMARY = "crucible.megakernel.summary/"


def add_parser(sub) -> None:
    parser = sub.add_parser("publish", help="copy a run file (or a megakernel summary) into results/",
                            description=__doc__.split("\n\n", 1)[1])
    parser.add_argument("files", nargs="+", metavar="FILE", help="run files (*.jsonl) or a megakernel summary (*.json)")
    parser.add_argument("--results", default="results", help="the published results folder (default: results)")
    parser.set_defaults(run=_run)


def _run(args) -> int:
    for file in args.files:
        for line in publish(Path(file), Path(args.results)):
            print(line)
    return 0


def publish(source: Path, results: Path) -> list[str]:
    """Copy ``source`` into ``results``; one line per file said what happened."""
    if not source.is_file():
        raise UserError(f"publish {source}: no such file; give a run file from runs/ (or your --runs-dir)")
    if source.suffix == ".jsonl":
        return _publish_run(source, results / "runs")
    if source.suffix == ".json" and _is_megakernel_summary(source):
        return [_copy(source, results / "megakernel" / "summary.json", replace=True)]
    raise UserError(f"publish {source}: not a run file (*.jsonl) or a megakernel summary (*.json with schema "
                    f"{MEGAKERNEL_SUMMARY}*)")


def _publish_run(source: Path, folder: Path) -> list[str]:
    from harness.records.results import details_path, read_run

    header, records = read_run(source)  # refuses an unknown schema with its own message
    if not header:
        raise UserError(f"publish {source}: it has no header line, so it is not a Crucible run file")
    if not records:
        raise UserError(f"publish {source}: the run has no records yet; publish it once it has some")
    lines = [_copy(source, folder / source.name)]
    if details_path(source).is_file():
        lines.append(_copy(details_path(source), folder / details_path(source).name))
    return lines


def _is_megakernel_summary(source: Path) -> bool:
    try:
        schema = json.loads(source.read_text()).get("schema", "")
    except (ValueError, AttributeError):
        return False
    return isinstance(schema, str) and schema.startswith(MEGAKERNEL_SUMMARY)


def _copy(source: Path, target: Path, replace: bool = False) -> str:
    if target.exists() and filecmp.cmp(source, target, shallow=False):
        return f"already published: {target}"
    if target.exists() and not replace:
        raise UserError(f"publish {source}: {target} exists with other content; published runs are append-only, "
                        "so give the new run its own file name (a new run id)")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return f"published: {target}"
