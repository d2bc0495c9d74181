"""Regenerate the paper figures from result files: ``python -m leaderboard.figures --results DIR --out DIR``.

Writes PNG and PDF for each figure type of KernelBench and the source papers that the results can
support, skips the others with the reason, and lists both in ``index.md``. The same inputs give
byte-identical outputs (fixed style, no timestamps in the files, seeded bootstrap).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Callable

import matplotlib.pyplot as plt
import pandas as pd

from harness.records import metrics
from harness.errors import UserError
from leaderboard import charts, paper_charts, tables
from leaderboard.data import load_frame, load_megakernel_summary, megakernel_view, records_of, transcripts

PNG_METADATA = {"Software": None}
PDF_METADATA = {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None}


def slug(*parts) -> str:
    text = "__".join(str(part) for part in parts if part is not None and str(part) not in ("", "nan", "None", "<NA>"))
    return re.sub(r"[^a-z0-9_.-]+", "-", text.lower()).strip("-")


def save(figure, out: Path, name: str) -> list[Path]:
    """Write ``name.png`` and ``name.pdf`` without anything that changes from run to run."""
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    with plt.rc_context(charts.STYLE):
        figure.savefig(paths[0], metadata=PNG_METADATA)
        figure.savefig(paths[1], metadata=PDF_METADATA)
    plt.close(figure)
    return paths


FIGURE_BOARD = ("suite", "hardware", "precision", "size", "timer")  # a board less its level: levels are panels
BASELINE_NAMES = {"eager": "PyTorch eager", "compile": "torch.compile", "best": "the faster baseline"}


def board_title(what: str, board: pd.DataFrame, baseline: str | None = None) -> str:
    """``what · device · precision · size [· timer] [· against baseline]``, from the board's rows."""
    first = board.iloc[0]
    parts = [what, first.get("hardware"), first.get("precision"), f"size {first.get('size')}"]
    parts += [f"timer {first['timer']}"] if isinstance(first.get("timer"), str) else []
    parts += [f"against {BASELINE_NAMES[baseline]}"] if baseline else []
    return " · ".join(str(p) for p in parts if p is not None and str(p) not in ("nan", "None"))


def board_figures(frame: pd.DataFrame, baseline: str = "eager", tables_out: dict | None = None) -> dict[str, Callable]:
    """The figures of each board (suite, device, precision, size, timer) by the app's definitions
    (``harness.records.boards``, ``leaderboard.tables``); ``tables_out`` receives the fast_1 table drawn."""
    builders: dict[str, Callable] = {}
    own = frame[~frame["imported"] & frame["level"].notna()]  # level-less suites (megakernel) have their own figures
    sizes = tables.level_sizes(frame)
    for _, board in own.groupby(metrics.group_codes(own, FIGURE_BOARD), sort=True):
        tag = slug(*(board.iloc[0][k] for k in FIGURE_BOARD), baseline)
        builders.update({f"{name}__{tag}": build for name, build in _board_builders(board, baseline, sizes, tag, tables_out).items()})
    return builders


def _board_builders(board, baseline, sizes, tag, tables_out) -> dict[str, Callable]:
    title = lambda what, against=True: board_title(what, board, baseline if against else None)  # noqa: E731
    ranked = tables.leaderboard(board, baseline, with_ci=True, sizes=sizes)
    if tables_out is not None:
        tables_out[tag] = ranked
    grid = tables.problem_grid(board, baseline)
    attempts = metrics.select_runs(metrics.attempt_frame(board, baseline))
    return {
        "fast_1": lambda: paper_charts.fast_1_bars(ranked[ranked["role"] != "imported"], title("fast_1 per level")),
        "fast_p": lambda: charts.fast_p_chart(tables.fast_p_curves(board, baseline, sizes=sizes), title("fast_p against p")),
        "speedup_distribution": lambda: charts.speedup_distribution_chart(
            tables.best_speedups(board, baseline), BASELINE_NAMES[baseline], title("Speedup of correct kernels")),
        "problem_heatmap": lambda: paper_charts.problem_heatmap(grid, title("Speedup per problem")),
        "failure_modes": lambda: paper_charts.failure_breakdown(_outcomes(attempts), title("Outcomes of attempts", False)),
        "sol_fraction": lambda: paper_charts.sol_distribution(grid[grid["correct"] > 0], title("SOL fraction of correct kernels", False)),
        "tokens_speedup": lambda: paper_charts.tokens_speedup(attempts[attempts["ok"]], title("Tokens against speedup")),
        "refinement": lambda: charts.refinement_chart(tables.refinement_steps(_with_steps(board)),
                                                      title("Correctness and speedup against refinement step")),
        "tokens_correctness": lambda: charts.tokens_correctness_chart(
            tables.tokens_correctness(board), title("Tokens against correctness (best of the first k attempts)", False)),
        "cost_speedup": lambda: charts.cost_speedup_chart(
            tables.cost_speedup_points(ranked[ranked["role"] == "ranked"]), title("Cost against speedup")),
    }


def _outcomes(attempts: pd.DataFrame) -> pd.DataFrame:
    scored = attempts[~attempts["excluded"]]
    outcome = scored["status"].where(~scored["flagged"], "flagged").fillna("unknown")
    counts = scored.assign(outcome=outcome).groupby(["generator", "model", "hardware", "precision", "outcome"],
                                                    dropna=False).size()
    return counts.rename("attempts").reset_index()


def _with_steps(board: pd.DataFrame) -> list[dict]:
    """Records with their transcripts, read from the details files of this board only."""
    light = board[["generator", "model", "level", "flags", "imported", "run_file"] + (["details"] if "details" in board else [])]
    steps = transcripts(light)
    records = records_of(light.drop(columns=["run_file"]))
    return [{**record, "transcript": transcript} for record, transcript in zip(records, steps) if transcript]


def megakernel_figures(summary: dict | None) -> dict[str, Callable]:
    view = megakernel_view(summary)
    return {
        "megakernel_validator": lambda: charts.confusion_chart(view),
        "megakernel_search_trajectory": lambda: charts.search_trajectory_chart(view),
        "megakernel_validator_throughput": lambda: paper_charts.validator_throughput(summary),
    }


def generate(results: str | Path, out: str | Path, log=print, baseline: str = "eager") -> dict[str, list]:
    """Write every figure the results support; returns {'written': [paths], 'skipped': [(name, why)]}.
    Beside each board's fast_1 figure, ``fast_1__<board>.csv`` holds the numbers it drew (the app's)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    loaded = load_frame(results)
    for warning in loaded.warnings:
        log(f"warning: {warning}")
    drawn: dict = {}
    builders = {**board_figures(loaded.frame, baseline, drawn), **megakernel_figures(load_megakernel_summary(results))}
    written, skipped = [], []
    for name, build in builders.items():
        try:
            written += save(build(), out, name)
        except charts.NoData as reason:
            skipped.append((name, str(reason)))
            log(f"skipped {name}: {reason}")
    for tag, table in drawn.items():
        columns = [c for c in ("level", "generator", "model", "role", "rank", "problems", "attempted", "correct",
                               "fast_1", "geomean_speedup") if c in table]
        table[columns].to_csv(out / f"fast_1__{tag}.csv", index=False, float_format="%.6g")
    _write_index(out, written, skipped)
    return {"written": written, "skipped": skipped}


def _write_index(out: Path, written: list[Path], skipped: list[tuple[str, str]]) -> None:
    lines = ["# Figures", "", "Generated by `python -m leaderboard.figures`.", ""]
    lines += [f"- [{path.name}]({path.name})" for path in written]
    if skipped:
        lines += ["", "## Skipped", ""] + [f"- {name}: {why}" for name, why in skipped]
    (out / "index.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m leaderboard.figures", description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default="results", help="results folder with runs/ (default: %(default)s)")
    parser.add_argument("--out", default="figures", help="folder for PNG and PDF files (default: %(default)s)")
    parser.add_argument("--baseline", default="eager", choices=list(BASELINE_NAMES),
                        help="speedups against this baseline (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        outcome = generate(args.results, args.out, baseline=args.baseline)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {len(outcome['written'])} files to {args.out}; skipped {len(outcome['skipped'])} figures")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
