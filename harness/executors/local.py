"""The local executor: this process runs each problem in turn and appends its records at once."""

from __future__ import annotations


def run_sweep(runner, problems, progress) -> list[dict]:
    """Generate and judge every problem not yet recorded; the records of this run, in order."""
    records: list[dict] = []
    for problem in problems:
        if runner.already_done(problem):
            progress.skip(problem.id)
            continue
        new = runner.run_problem(problem)
        records += new
        progress.done(problem.id, new)
    return records
