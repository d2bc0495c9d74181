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
        # level 1: ranked entries in rank order, then the baselines as unranked reference rows
        names = (">mkevolve<", ">kforge<", ">direct<", ">PyTorch eager (reference)<", ">inductor (reference)<")
        order = [dom.find(name) for name in names]
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


DONE = "document.body.innerText.includes('(run ')"  # the app's last line: its run has finished


@pytest.mark.slow
def test_baseline_and_tab_in_the_url_open_that_view_in_chromium(browser, results_dir):
    from leaderboard import cdp

    with screenshots.serve(results_dir) as url, cdp.Browser(browser) as page:
        page.open(url + "?baseline=compile")
        page.wait_for(f"document.querySelectorAll('table').length > 0 && {DONE}", 240, settle=0.5)
        checked = page.evaluate("[...document.querySelectorAll('[data-testid=stRadio] input:checked')]"
                                ".map(n => n.closest('label').innerText)")
        assert checked[0].startswith("compile"), checked
        cells = page.evaluate("[...document.querySelectorAll('table')[0].querySelectorAll('tr')]"
                              ".map(r => [...r.querySelectorAll('td,th')].map(c => c.innerText))")
        mkevolve = next(row for row in cells if "mkevolve" in row)
        assert "1.12x" in mkevolve, cells  # 1.4x against eager is 1.12x against torch.compile
        page.open(url + "?tab=Problems&problem=L1%2F2_Op2")
        page.wait_for(f"document.querySelectorAll('.vega-embed canvas, .vega-embed svg').length > 0 && {DONE}", 240,
                      settle=0.5)
        # the code block's highlighter is a chunk loaded on first use: wait for the element itself
        page.wait_for("document.querySelector('[data-testid=stCode]')", 120)
        source = page.evaluate("document.querySelector('[data-testid=stCode]').innerText")
        assert "class ModelNew" in source and "L1/2_Op2" in source  # the attempt's source
        assert page.evaluate("location.search").count("problem=L1") == 1


@pytest.mark.slow
def test_clicking_a_heatmap_cell_opens_that_problem(browser, results_dir):
    from leaderboard import cdp

    with screenshots.serve(results_dir) as url, cdp.Browser(browser) as page:
        page.open(url + "?tab=Problems")
        page.wait_for(f"document.querySelector('.vega-embed [aria-label]') && {DONE}", 240, settle=0.5)
        # each cell carries its tooltip text as aria-label: find kforge's cell for problem 4
        box = page.evaluate(
            "(() => { const cell = [...document.querySelectorAll('.vega-embed [aria-label]')].find(n => "
            "n.getAttribute('aria-label').includes('L1/4_Op4') && n.getAttribute('aria-label').includes('kforge'));"
            " const r = cell.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            page.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)
        page.wait_for("location.search.includes('problem=L1%2F4_Op4')", 120)
        page.wait_for("document.querySelector('[data-testid=stCode]')"
                      " && document.querySelector('[data-testid=stCode]').innerText.includes('L1/4_Op4')", 120)
