"""The device's peaks measured cold (one round straight after start-up) and by the harness's method
(the GPU kept busy first, the best of three rounds), to show what a cold measurement loses.

Usage: python bench/peak_probe.py [--device cuda]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    from harness import device

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=device.DEVICES)
    args = parser.parse_args()
    size, elements = (4096, 1 << 28) if args.device == "cuda" else (512, 1 << 24)
    cold = device._measure_once(args.device, size, elements)
    method = device._measure(args.device)
    print(f"{device.device_name(args.device)}, peak method {device._PEAK_METHOD}")
    for name, peaks in (("cold, one round", cold), ("harness method", method)):
        rates = "  ".join(f"{p} {r / 1e12:.1f}" for p, r in peaks["flops_per_s"].items())
        print(f"{name:16s} copy {peaks['bytes_per_s'] / 1e12:.3f} TB/s   TFLOP/s: {rates}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
