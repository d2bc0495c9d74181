"""Fixtures of the leaderboard tests; the builders live in leaderboard_fixtures.py."""

from pathlib import Path

import pytest
from leaderboard_fixtures import build_results


@pytest.fixture(scope="session")
def results_dir(tmp_path_factory) -> Path:
    return build_results(tmp_path_factory.mktemp("results"))


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """The leaderboard's column cache goes to a temporary folder, never the user's ~/.cache."""
    monkeypatch.setenv("CRUCIBLE_CACHE", str(tmp_path_factory.getbasetemp() / "crucible-cache"))
