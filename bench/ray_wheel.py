"""Wheels to carry Ray to a machine that cannot reach PyPI (the GPU image has no ray).

Usage: python bench/ray_wheel.py --python 3.12 [--version 2.60.0] [--out wheels]

Downloads ray and its dependencies for that Python version, and writes a slim copy of the ray wheel without the libraries that Crucible's executor does not use
(the Java jars, RLlib, Tune, Train, Serve, Data, LLM, Workflow): the full wheel is about 79 MB,
over a 64 MiB carry limit. Ray's core (raylet, GCS, workers, actors, runtime_env) is kept whole.
Then, on the target: ``pip install --no-index --find-links wheels ray``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

DROPPED = ("ray/jars/", "ray/rllib/", "ray/tune/", "ray/train/", "ray/serve/", "ray/data/", "ray/llm/", "ray/workflow/")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", required=True, help="the target's Python version, e.g. 3.12")
    parser.add_argument("--version", default="2.60.0", help="ray version (default: 2.60.0)")
    parser.add_argument("--out", default="wheels", help="folder for the wheels (default: wheels)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    full = out / "full"
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
                    "--python-version", args.python, "--platform", "manylinux2014_x86_64", "--dest", str(full),
                    f"ray=={args.version}"], check=True)
    for wheel in full.glob("*.whl"):
        if not wheel.name.startswith("ray-"):
            (out / wheel.name).write_bytes(wheel.read_bytes())
    for wheel in full.glob("ray-*.whl"):
        slim = out / wheel.name
        slim_copy(wheel, slim)
        print(f"{slim}: {slim.stat().st_size / 2**20:.1f} MiB (from {wheel.stat().st_size / 2**20:.1f} MiB)")
    carried = sum(w.stat().st_size for w in out.glob("*.whl"))
    print(f"{out}/*.whl: {carried / 2**20:.1f} MiB in all (carry {out} without {full.name}/)")
    return 0


def slim_copy(source: Path, target: Path) -> None:
    """The wheel without DROPPED, its RECORD rewritten to list exactly what is left."""
    with zipfile.ZipFile(source) as whole, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as slim:
        record_name = next(name for name in whole.namelist() if name.endswith(".dist-info/RECORD"))
        lines = []
        for info in whole.infolist():
            if info.filename.startswith(DROPPED) or info.filename == record_name:
                continue
            data = whole.read(info)
            slim.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            lines.append(f"{info.filename},sha256={digest},{len(data)}")
        lines.append(f"{record_name},,")
        slim.writestr(record_name, "\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
