"""Fixtures of the leaderboard tests; the builders live in leaderboard_fixtures.py."""

from pathlib import Path

import pytest
from leaderboard_fixtures import build_results


@pytest.fixture(scope="session")
def results_dir(tmp_path_factory) -> Path:
    return build_results(tmp_path_factory.mktemp("results"))
