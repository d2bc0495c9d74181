"""A small driver for headless Chromium over the DevTools protocol (loopback only), to time what a
reader waits for in a real browser and to take screenshots of views reached by clicking.

Uses the ``websockets`` client, which Streamlit already installs.
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from harness.errors import UserError

# Streamlit shows its status widget while a script run is in flight.
IDLE = "!document.querySelector('[data-testid=\"stStatusWidget\"]')"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Browser:
    """One headless Chromium with one page; ``with Browser(binary) as page: page.open(url)``."""

    def __init__(self, binary: str, size: str = "1400,1000"):
        self.binary, self.size, self._next = binary, size, 0

    def __enter__(self) -> "Browser":
        self._profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)  # helpers may still write
        port = free_port()
        self._process = subprocess.Popen(
            [self.binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             f"--remote-debugging-port={port}", "--remote-debugging-address=127.0.0.1", f"--window-size={self.size}",
             f"--user-data-dir={self._profile.name}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.pid = self._process.pid
        self._stack = contextlib.ExitStack()
        self._socket = self._stack.enter_context(self._connect(port))
        self.call("Page.enable")
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._stack.close()
        finally:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
            self._profile.cleanup()

    def _connect(self, port: int):
        from websockets.sync.client import connect

        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=2) as reply:
                    pages = [p for p in json.loads(reply.read()) if p.get("type") == "page"]
                return connect(pages[0]["webSocketDebuggerUrl"], max_size=1 << 28, open_timeout=30)
            except (OSError, IndexError, KeyError, ValueError):
                if time.monotonic() > deadline:
                    raise UserError("headless Chromium did not open its DevTools port within 30 s") from None
                time.sleep(0.2)

    def call(self, method: str, **params) -> dict:
        self._next += 1
        ident = self._next
        self._socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            reply = json.loads(self._socket.recv(timeout=120))
            if reply.get("id") == ident:
                if "error" in reply:
                    raise UserError(f"DevTools {method}: {reply['error']}")
                return reply.get("result", {})

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def wait_for(self, expression: str, timeout: float = 60.0, settle: float = 0.0) -> float:
        """Seconds until ``expression`` (JavaScript) is true and the app is idle; polls every 20 ms.
        ``settle``: the condition must still hold that much later (Streamlit may start a rerun)."""
        started = time.perf_counter()
        condition = f"({expression}) && {IDLE}"
        while time.perf_counter() - started < timeout:
            if self.evaluate(condition):
                seen = time.perf_counter() - started
                if settle <= 0:
                    return seen
                time.sleep(settle)
                if self.evaluate(condition):
                    return seen
            time.sleep(0.02)
        raise UserError(f"the page did not show {expression!r} within {timeout:.0f} s")

    def click_text(self, selector: str, text: str) -> None:
        """Click the first element matching ``selector`` whose text contains ``text``."""
        found = self.evaluate(
            f"(() => {{ const e = [...document.querySelectorAll({json.dumps(selector)})]"
            f".find(n => n.innerText.includes({json.dumps(text)})); if (e) {{ e.click(); return true; }} return false; }})()")
        if not found:
            raise UserError(f"nothing matching {selector} with text {text!r} to click")

    def screenshot(self, path: Path, full_page: bool = True) -> None:
        """A PNG of the page; ``full_page`` grows the window to the page's height first (Streamlit
        scrolls inside its own containers, so the page itself never gets taller than the window)."""
        if full_page:
            height = self.evaluate("Math.max(document.querySelector('[data-testid=\"stMainBlockContainer\"]')"
                                   "?.scrollHeight || 0, document.querySelector('[data-testid=\"stSidebarContent\"]')"
                                   "?.scrollHeight || 0) + 120") or 1000
            width = int(self.size.split(",")[0])
            self.call("Emulation.setDeviceMetricsOverride", width=width, height=min(int(height), 8000),
                      deviceScaleFactor=1, mobile=False)
            time.sleep(2)  # let the app lay out and draw at the new size
        data = self.call("Page.captureScreenshot", format="png")["data"]
        Path(path).write_bytes(base64.b64decode(data))
