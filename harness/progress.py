"""Progress lines on long runs and the closing summary per level."""

from __future__ import annotations

import hashlib
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
        lines.append(f"L{level}: {s['correct']}/{s['problems']} correct ({rate}), "
                     f"geomean speedup {geo}, fast_1 {fast_1}, median SOL fraction {sol}")
        failed = failure_split(by_level[level])
        if failed:
            lines.append(f"    not correct: {failed}")
    return lines


_EMPTY_SHA = hashlib.sha256(b"").hexdigest()[:16]  # Candidate("").sha: the generator wrote no source


def failure_split(records: list[dict]) -> str:
    """The problems without a correct record, split into "wrote nothing" (no source came back: no rule,
    no reply, budget spent) and "wrote something wrong" by status; '' when every problem is correct."""
    best: dict = {}
    for record in records:
        current = best.get(record.get("problem_id"))
        if current is None or (record.get("correct"), bool(_wrote(record))) > (current.get("correct"), bool(_wrote(current))):
            best[record.get("problem_id")] = record
    nothing = sum(1 for r in best.values() if not r.get("correct") and not _wrote(r))
    wrong = defaultdict(int)
    for r in best.values():
        if not r.get("correct") and _wrote(r):
            wrong[r.get("status") or "unknown"] += 1
    if not nothing and not wrong:
        return ""
    detail = ", ".join(f"{status} {count}" for status, count in sorted(wrong.items()))
    return f"generator wrote nothing {nothing}; wrote something wrong {sum(wrong.values())}" + (f" ({detail})" if detail else "")


def _wrote(record: dict) -> bool:
    return record.get("candidate_sha") != _EMPTY_SHA
