"""End to end: start the app with `streamlit run`, load it in headless Chromium, check the rankings
rendered and keep a screenshot (set CRUCIBLE_SCREENSHOT_DIR to keep it outside pytest's tmp)."""

import os
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from leaderboard import screenshots  # noqa: E402


@pytest.fixture()
def browser():
    found = screenshots.find_browser()
    if found is None:
        pytest.skip("no headless Chromium (Debian: apt-get install chromium)")
    return found


@pytest.mark.slow
def test_app_renders_the_rankings_in_headless_chromium(browser, results_dir, tmp_path):
    with screenshots.serve(results_dir) as url:
        dom = screenshots.rendered_dom(browser, url, ">mkevolve<")
        assert "<table" in dom, "no HTML table in the rendered page"
        assert "Crucible leaderboard" in dom
        order = [dom.find(f">{name}<") for name in ("mkevolve", "inductor", "direct", "kforge")]  # table cells
        assert -1 not in order, "a generator is missing from the rendered tables"
        assert order == sorted(order), "level 1 ranking rendered out of order"
        shots = Path(os.environ.get("CRUCIBLE_SCREENSHOT_DIR", tmp_path))
        shots.mkdir(parents=True, exist_ok=True)
        shot = shots / "leaderboard_rankings.png"
        assert screenshots.screenshot(browser, url, shot), "screenshot stayed blank"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tab_urls_select_tabs_through_query_parameters():
    assert screenshots.tab_url("http://h/", "Rankings") == "http://h/"
    assert screenshots.tab_url("http://h/", "Problems", problem="L1/1_Op") == "http://h/?tab=Problems&problem=L1%2F1_Op"
