"""Screenshots of the running app in headless Chromium, one per tab:

    python -m leaderboard.screenshots --results results --out docs/screenshots [--problem L1/19_ReLU]

Starts ``streamlit run leaderboard/app.py`` on a free local port, opens each tab through its URL
(the app binds its tabs and filters to query parameters), and writes ``leaderboard_<tab>.png``.
Needs a Chromium binary (Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from harness.errors import UserError
from leaderboard import cdp
from leaderboard.cdp import free_port  # noqa: F401  (part of this module's interface)

REPO = Path(__file__).resolve().parent.parent
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# Virtual time runs ahead of the wall clock while the page waits on its websocket; 60 s of it
# covers the app's first render on a busy 2-core machine, and retries cover the rest.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                  "--virtual-time-budget=60000")
BLANK_PAGE_BYTES = 20_000  # a page with nothing rendered is a few KB of PNG


def find_browser() -> str | None:
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "_stcore/health", timeout=2) as reply:
            return reply.read().strip() == b"ok"
    except OSError:
        return False


@contextmanager
def serve(results: str | Path, seconds: float = 90):
    """The app running on a free port over ``results``; yields its URL, stops it afterwards."""
    with serve_process(results, seconds) as (url, _):
        yield url


@contextmanager
def serve_process(results: str | Path, seconds: float = 90):
    """As ``serve``, yielding (URL, the server's process) so a benchmark can read its CPU time."""
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", str(REPO / "leaderboard" / "app.py"),
               "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
               "--browser.gatherUsageStats", "false", "--", "--results", str(results)]
    with tempfile.TemporaryDirectory() as home:  # keeps streamlit's per-user files out of $HOME
        server = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, env={**os.environ, "HOME": home})
        url = f"http://127.0.0.1:{port}/"
        try:
            _wait(server, url, seconds)
            yield url, server
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()


def _wait(server: subprocess.Popen, url: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise UserError(f"streamlit exited before serving the app:\n{server.stdout.read()[-2000:]}")
        if _healthy(url):
            return
        time.sleep(0.5)
    raise UserError(f"the app did not answer on {url} within {seconds:.0f} s")


def chromium(browser: str, *arguments: str, size: str = "1400,1000") -> str:
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run([browser, *CHROMIUM_FLAGS, f"--window-size={size}", f"--user-data-dir={profile}",
                               *arguments], capture_output=True, text=True, timeout=150)
    return done.stdout


def rendered_dom(browser: str, url: str, marker: str, attempts: int = 8) -> str:
    """The page's DOM once ``marker`` is in it. Early loads may end before the app's first run does;
    each one warms the server's caches, so retry."""
    dom = ""
    for _ in range(attempts):
        dom = chromium(browser, "--dump-dom", url)
        if marker in dom:
            break
    return dom


def screenshot(browser: str, url: str, path: Path, size: str = "1400,1000", attempts: int = 4) -> bool:
    for _ in range(attempts):
        chromium(browser, f"--screenshot={path}", url, size=size)
        if path.exists() and path.stat().st_size > BLANK_PAGE_BYTES:
            return True
    return False


def tab_url(url: str, tab: str, **params: str) -> str:
    query = {"tab": tab, **params} if tab != "Rankings" else params
    return url + ("?" + urllib.parse.urlencode(query) if query else "")


VIEWS = (  # (file name, URL parameters, what must be on the page, window size)
    ("rankings", {}, "document.querySelectorAll('table').length > 0", "1400,1400"),
    ("rankings_compile", {"baseline": "compile"}, "document.querySelectorAll('table').length > 0", "1400,1400"),
    ("problems", {"tab": "Problems"}, "document.querySelectorAll('.vega-embed canvas, .vega-embed svg').length > 0"
     " && document.querySelector('[data-testid=\"stCode\"]')", "1400,2200"),
    ("runs", {"tab": "Runs"}, "document.querySelector('[data-testid=\"stJson\"]')", "1400,1600"),
    ("charts", {"tab": "Charts"}, "document.querySelectorAll('.vega-embed canvas, .vega-embed svg').length > 0",
     "1400,1800"),
    ("flagged", {"tab": "Flagged"}, "document.querySelector('[data-testid=\"stDataFrame\"], [data-testid=\"stAlert\"]')",
     "1400,900"),
    ("megakernel", {"tab": "Megakernel"}, "document.querySelector('[data-testid=\"stImage\"], [data-testid=\"stAlert\"]')",
     "1400,1500"),
)


def take_all(results: str | Path, out: str | Path, problem: str | None = None, log=print,
             board: str | None = None) -> list[Path]:
    """One screenshot per view, each opened by its URL in headless Chromium (DevTools protocol)
    once the app has finished drawing it."""
    browser = find_browser()
    if browser is None:
        raise UserError("no Chromium found; install it (Debian: apt-get install chromium)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with serve(results, seconds=180) as url:
        for name, params, marker, size in VIEWS:
            params = {**params, **({"problem": problem} if problem and name == "problems" else {}),
                      **({"board": board} if board and name in ("problems", "charts") else {})}
            path = out / f"leaderboard_{name}.png"
            with cdp.Browser(browser, size=size) as page:
                page.open(url + ("?" + urllib.parse.urlencode(params) if params else ""))
                try:
                    page.wait_for(marker, 240, settle=1.0)
                    time.sleep(3)  # data grids and charts draw after the run ends
                except UserError as error:
                    log(f"could not capture the {name} view: {error}")
                    continue
                page.screenshot(path)
            written.append(path)
            log(f"wrote {path}")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m leaderboard.screenshots", description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default="results", help="results folder (default: %(default)s)")
    parser.add_argument("--out", default="screenshots", help="folder for PNG files (default: %(default)s)")
    parser.add_argument("--problem", help="problem id to open in the drill-down, e.g. L1/19_ReLU")
    parser.add_argument("--board", help="board title for the heatmap and charts (as the Board selector shows it)")
    args = parser.parse_args(argv)
    try:
        take_all(args.results, args.out, args.problem, board=args.board)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
