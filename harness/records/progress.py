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
        if best.get("speedup_ci"):
            low, high = best["speedup_ci"]
            speed += f" [{low:.2f}-{high:.2f}, {best.get('speed_verdict')}]"
        flags = f" flags={','.join(best['flags'])}" if best.get("flags") else ""
        reason = f" ({best['reason'][:80]})" if best["status"] != "ok" and best.get("reason") else ""
        self._line(f"{problem_id}: {best['status']}{speed}{flags}{reason}")

    def summary(self, records: list[dict], path) -> None:
        for line in summary_lines(records):
            print(line, file=self.stream)
        print(f"records: {path}", file=self.stream)


def summary_lines(records: list[dict]) -> list[str]:
    """One line per level: correctness, geomean speedup, fast_1, SOL fraction (metrics shared with the leaderboard)."""
    from harness.records.metrics import level_summary

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
                     f"geomean speedup {geo}, fast_1 {fast_1}, median SOL fraction {sol}{_verdicts(by_level[level])}")
        failed = failure_split(by_level[level])
        if failed:
            lines.append(f"    not correct: {failed}")
    return lines + _phase_lines(records)


def _verdicts(records: list[dict]) -> str:
    """How the timed speedups' intervals fell: above 1, below 1, or across it."""
    verdicts = [r.get("speed_verdict") for r in records if r.get("speed_verdict")]
    if not verdicts:
        return ""
    return (f"; speed vs eager: {verdicts.count('faster')} faster, {verdicts.count('indistinguishable')} "
            f"indistinguishable, {verdicts.count('slower')} slower (by their intervals)")


def _phase_lines(records: list[dict]) -> list[str]:
    """Where the run's wall time went, summed over records (``phases_s``), and the fixed cost of
    an evaluation: its wall time less its timed rounds."""
    totals: dict[str, float] = defaultdict(float)
    fixed = []
    for record in records:
        phases = record.get("phases_s") or {}
        totals["reference"] += float(phases.get("reference") or 0.0)
        for phase, seconds in (phases.get("candidate") or {}).items():
            totals[phase] += float(seconds)
        if record.get("elapsed_s") is not None:
            fixed.append(record["elapsed_s"] - float((phases.get("candidate") or {}).get("timing", 0.0)))
    if not fixed:
        return []
    from statistics import median

    spent = ", ".join(f"{phase} {seconds:.0f}" for phase, seconds in sorted(totals.items(), key=lambda kv: -kv[1]) if seconds >= 0.5)
    return [f"time: {len(fixed)} evaluations, {sum(r.get('elapsed_s') or 0 for r in records):.0f} s in all "
            f"(s by phase: {spent}); fixed cost per evaluation, median {median(fixed):.2f} s (wall less timed rounds)"]


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
