"""pytest hooks of the megakernel suite: its options and the per-run sharing of its parts.

These hooks live in a plugin module (loaded by ``harness.pytest_plugin``), not in
``suites/megakernel/conftest.py``: under pytest-xdist the controller never collects, so it never
loads a conftest below the paths it was given, and an option or a ``pytest_sessionfinish`` there
would be missing exactly where the summary has to be written. The fixtures that use these parts
stay in the suite's conftest.

Each part (corpus, throughput, VM, search) is computed by the first worker that needs it and
handed to the others through a file named by this pytest run's id (a lock keeps the rest
waiting), so no work is done twice; the controller merges the parts into the run file and the
summary when the session ends, then removes them.
"""

from __future__ import annotations

import pickle
import tempfile
from pathlib import Path

from harness.options import DEFAULT_RUNS_DIR, positive_int, typed
from harness.pytest_support import run_id

try:
    import fcntl
except ImportError:  # not POSIX: parts are still computed, only sharing between workers is lost
    fcntl = None

DEFAULT_SUMMARY = "runs/megakernel_summary.json"  # publish with: python -m harness publish FILE


def pytest_addoption(parser):
    from harness.megakernel.corpus import DEFAULT_SEED, DEFAULT_SIZE

    group = parser.getgroup("megakernel", "Crucible megakernel schedule suite")
    group.addoption("--mk-seed", type=int, default=DEFAULT_SEED, help=f"corpus seed (default {DEFAULT_SEED})")
    group.addoption("--mk-size", type=typed(positive_int("--mk-size")), default=DEFAULT_SIZE,
                    help=f"corpus schedules (default {DEFAULT_SIZE}; the suite requires >= 10000)")
    group.addoption("--mk-workers", type=typed(positive_int("--mk-workers")), default=None,
                    help="processes that label the corpus (default: one per core)")
    group.addoption("--mk-summary", default=DEFAULT_SUMMARY,
                    help=f"summary JSON for the leaderboard (default {DEFAULT_SUMMARY})")


def part_path(config, name: str) -> Path:
    return Path(tempfile.gettempdir()) / f"crucible-mk-{run_id(config)}-{name}.pkl"


def shared_part(config, name: str, compute):
    """(summary section, value) of part ``name``, computed once per run across xdist workers."""
    path = part_path(config, name)
    with open(path.with_suffix(".lock"), "w") as lock:
        if fcntl:
            fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            return pickle.loads(path.read_bytes())
        section: dict = {}
        value = compute(section)
        path.write_bytes(pickle.dumps((section, value)))
        return section, value


def pytest_sessionfinish(session):
    config = session.config
    this_run = run_id(config)
    if hasattr(config, "workerinput") or this_run is None:
        return
    parts = sorted(Path(tempfile.gettempdir()).glob(f"crucible-mk-{this_run}-*"))
    if not parts:
        return
    from harness.megakernel import records

    summary = records.new_summary()
    for path in parts:
        if path.suffix == ".pkl":
            summary.update(pickle.loads(path.read_bytes())[0])
    for path in parts:
        path.unlink(missing_ok=True)
    if any(key in summary for key in ("corpus", "throughput", "vm", "search", "executor")):
        records.write_summary(summary, _output(config, "mk_summary", DEFAULT_SUMMARY))
        records.write_run(summary, _output(config, "runs_dir", DEFAULT_RUNS_DIR))


def _output(config, name: str, default: str) -> Path:
    path = Path(config.getoption(name, default=default) or default)
    return path if path.is_absolute() else Path(config.rootpath) / path
