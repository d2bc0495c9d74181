"""Progress lines on long runs and the closing summary per level."""

from __future__ import annotations

import sys
import time
from collections import defaultdict


class Progress:
    def __init__(self, total: int, stream=None):
        self.total = total
        self.count = 0
        self.started = time.perf_counter()
        self.stream = stream or sys.stderr

    def _line(self, text: str) -> None:
        elapsed = time.perf_counter() - self.started
        eta = elapsed / self.count * (self.total - self.count) if self.count else 0.0
        print(f"[{self.count}/{self.total} {elapsed:6.0f}s eta {eta:5.0f}s] {text}", file=self.stream, flush=True)

    def skip(self, problem_id: str) -> None:
        self.count += 1
        self._line(f"{problem_id}: already recorded, skipped (--resume)")

    def done(self, problem_id: str, records: list[dict]) -> None:
        self.count += 1
        best = max(records, key=lambda r: (r["correct"], r.get("speedup") or 0.0))
        speed = f" speedup {best['speedup']:.2f}x" if best.get("speedup") else ""
        flags = f" flags={','.join(best['flags'])}" if best.get("flags") else ""
        reason = f" ({best['reason'][:80]})" if best["status"] != "ok" and best.get("reason") else ""
        self._line(f"{problem_id}: {best['status']}{speed}{flags}{reason}")

    def summary(self, records: list[dict], path) -> None:
        for line in summary_lines(records):
            print(line, file=self.stream)
        print(f"records: {path}", file=self.stream)


def summary_lines(records: list[dict]) -> list[str]:
    """One line per level: correctness, geomean speedup, fast_1, SOL fraction (metrics shared with the leaderboard)."""
    from harness.metrics import level_summary

    by_level = defaultdict(list)
    for record in records:
        by_level[record.get("level")].append(record)
    lines = []
    for level in sorted(by_level, key=lambda v: (v is None, v)):
        s = level_summary(by_level[level])
        geo = f"{s['geomean_speedup']:.3f}" if s.get("geomean_speedup") else "n/a"
        sol = f"{s['median_sol_fraction']:.3f}" if s.get("median_sol_fraction") else "n/a"
        rate = f"{100 * s['correctness_rate']:.0f}%" if s.get("correctness_rate") is not None else "n/a"
        fast_1 = f"{s['fast_1']:.2f}" if s.get("fast_1") is not None else "n/a"
        lines.append(f"L{level}: {s['correct']:g}/{s['problems']} correct ({rate}), "
                     f"geomean speedup {geo}, fast_1 {fast_1}, median SOL fraction {sol}")
    return lines
