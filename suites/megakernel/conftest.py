"""Session fixtures of the megakernel suite.

Each part (corpus, throughput, VM, search) runs once per pytest run and adds its section to the
summary. Under pytest-xdist the part is computed by the first worker that needs it and handed to
the others through a per-run file (a lock keeps the rest waiting), so no work is done twice; the
controller writes the run file and results/megakernel/summary.json when the session ends. Nothing
is kept across runs: the files are named by this run's id and removed at the end.
"""

from __future__ import annotations

import argparse
import pickle
import secrets
import tempfile
from pathlib import Path

import pytest

from harness.megakernel import corpus, records, suite

try:
    import fcntl
except ImportError:  # not POSIX: parts are still computed, only sharing between workers is lost
    fcntl = None

_RUN_KEY = pytest.StashKey[str]()


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def pytest_addoption(parser):
    group = parser.getgroup("megakernel", "Crucible megakernel schedule suite")
    group.addoption("--mk-seed", type=int, default=corpus.DEFAULT_SEED,
                    help=f"corpus seed (default {corpus.DEFAULT_SEED})")
    group.addoption("--mk-size", type=_positive_int, default=corpus.DEFAULT_SIZE,
                    help=f"corpus schedules (default {corpus.DEFAULT_SIZE}; the suite requires >= 10000)")
    group.addoption("--mk-workers", type=_positive_int, default=None,
                    help="processes that label the corpus (default: one per core)")
    group.addoption("--mk-summary", default="results/megakernel/summary.json",
                    help="summary JSON for the leaderboard (default results/megakernel/summary.json)")
    # --runs-dir comes from the harness plugin (harness.pytest_plugin); without it, results/runs.


def pytest_configure(config):
    if not hasattr(config, "workerinput"):
        config.stash[_RUN_KEY] = secrets.token_hex(6)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    node.workerinput["mk_run_key"] = node.config.stash[_RUN_KEY]


def _run_key(config) -> str:
    worker = getattr(config, "workerinput", None)
    return worker["mk_run_key"] if worker else config.stash[_RUN_KEY]


def _part_path(config, name: str) -> Path:
    return Path(tempfile.gettempdir()) / f"crucible-mk-{_run_key(config)}-{name}.pkl"


def _shared(config, name: str, compute):
    """(summary section, value) of part ``name``, computed once per run across xdist workers."""
    path = _part_path(config, name)
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
    if hasattr(config, "workerinput"):
        return
    summary = records.new_summary()
    parts = sorted(Path(tempfile.gettempdir()).glob(f"crucible-mk-{_run_key(config)}-*"))
    for path in parts:
        if path.suffix == ".pkl":
            summary.update(pickle.loads(path.read_bytes())[0])
    for path in parts:
        path.unlink(missing_ok=True)
    if any(key in summary for key in ("corpus", "throughput", "vm", "search")):
        records.write_summary(summary, _output(config, "mk_summary", "results/megakernel/summary.json"))
        records.write_run(summary, _output(config, "runs_dir", "results/runs"))


def _output(config, name: str, default: str) -> Path:
    path = Path(config.getoption(name, default=default) or default)
    return path if path.is_absolute() else Path(config.rootpath) / path


@pytest.fixture(scope="session")
def mk_settings(request) -> dict:
    get = request.config.getoption
    return {"seed": get("mk_seed", default=corpus.DEFAULT_SEED), "size": get("mk_size", default=corpus.DEFAULT_SIZE),
            "workers": get("mk_workers", default=None)}


@pytest.fixture(scope="session")
def mk_rows(request, mk_settings) -> list[dict]:
    s = mk_settings
    return _shared(request.config, "corpus", lambda out: suite.corpus_part(out, s["seed"], s["size"], s["workers"]))[1]


@pytest.fixture(scope="session")
def mk_throughput(request, mk_settings) -> dict:
    s = mk_settings
    return _shared(request.config, "throughput", lambda out: suite.throughput_part(out, s["seed"], s["size"]))[1]


@pytest.fixture(scope="session")
def mk_vm(request):
    return _shared(request.config, "vm", suite.vm_part)


@pytest.fixture(scope="session")
def mk_search(request):
    return _shared(request.config, "search", suite.search_part)[1]
