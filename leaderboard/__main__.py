"""``python -m leaderboard [--results DIR] [streamlit options]``: serve the app with Streamlit."""

import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    app = Path(__file__).resolve().parent / "app.py"
    results = []
    if "--results" in argv:  # the app's own option goes after streamlit's "--"
        at = argv.index("--results")
        results, argv = argv[at:at + 2], argv[:at] + argv[at + 2:]
    command = [sys.executable, "-m", "streamlit", "run", str(app), *argv]
    return subprocess.call(command + (["--", *results] if results else []))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
