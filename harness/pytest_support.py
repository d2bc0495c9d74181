"""The pytest plugin's machinery: options, case selection, the runner, the closing summary."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.options import DEFAULT_GENERATOR

class CrucibleNotice(UserWarning):
    """A message of the run for the user (no endpoint, retries, an unpriced model): pytest captures
    printed lines, so these go to its warnings summary instead."""


def notice(line: str) -> None:
    import sys
    import warnings

    try:
        warnings.warn(CrucibleNotice(line), stacklevel=2)
    except Warning:  # -W error: say it anyway, without turning a message into a test failure
        sys.__stderr__.write(line + "\n")


RUN_ID = pytest.StashKey[str]()
RUN_FILE = pytest.StashKey[Path]()


def new_run_id() -> str:
    from harness.records.results import new_run_id as make

    return make()


def run_id(config) -> str | None:
    """This pytest run's id, the same on the xdist controller and on every worker."""
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        return worker.get("crucible_run_id")
    return config.stash.get(RUN_ID, None)


def add_options(group) -> None:
    """The option table's run options (harness/options.py), the same the CLI's ``run`` takes."""
    from harness.options import add_options as add, run_options

    try:
        options = run_options()
    except UserError as error:  # a generator's file that does not import, or two that clash
        raise pytest.UsageError(f"crucible: {error}") from None
    add(group.addoption, options)


def generator_name(config) -> str:
    return config.getoption("generator") or DEFAULT_GENERATOR


def skip_reason(config, suite: str) -> str | None:
    """Why ``suite``'s tests do not run in this session: a generator was named that writes no
    candidates for it. With no --generator every suite runs (CI, scripts/test.sh)."""
    from harness.registry import generator_suites

    named = config.getoption("generator")
    if named is None:
        return None
    try:
        suites = generator_suites(named)
    except UserError as error:
        raise pytest.UsageError(f"crucible: {error}") from None
    if suite in suites:
        return None
    return f"--generator {named} writes candidates for {' and '.join(suites)}, not for the {suite} suite"


@dataclass(frozen=True)
class Case:
    id: str
    level: int
    path: str


def selected_cases(config) -> list[Case]:
    from harness.problems.suite import parse_levels, problem_files

    try:
        files = problem_files(levels=parse_levels(config.getoption("level")), patterns=config.getoption("problem"),
                              subset=config.getoption("subset"), kernelbench_root=config.getoption("kernelbench_root"))
    except UserError as error:
        raise pytest.UsageError(str(error)) from None
    return [Case(f"L{level}/{path.stem}", level, str(path)) for level, path in files]


def load_case(case: Case, config):
    from harness.problems.problem import load_problem

    try:
        return load_problem(case.path, size=config.getoption("size"), level=case.level)
    except UserError as error:
        pytest.fail(f"{case.id}: {error}", pytrace=False)


def gpu_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def make_runner(config):
    from harness.judge.eval_setup import eval_options_from
    from harness.llm_options import budgets_from_args
    from harness.options import generator_kwargs, run_options
    from harness.executors.runner import Runner, gpu_for_worker, visible_gpu_count

    opt = config.getoption
    worker = getattr(config, "workerinput", {})
    gpu_index = None
    if opt("device") == "cuda":
        gpu_index = gpu_for_worker(worker.get("workerid"), visible_gpu_count())
        if gpu_index is not None:
            import torch

            torch.cuda.set_device(gpu_index)
    try:
        opts = eval_options_from(opt, gpu_index=gpu_index)
        if opt("executor") == "ray":
            from harness.executors import import_ray

            import_ray()  # says how to install it before the run file is started
        values = argparse.Namespace(**{option.dest: opt(option.dest) for option in run_options()})
        budget, run_budget = budgets_from_args(values)
        generator = generator_name(config)
        runner = Runner(generator, opts, opt("runs_dir"), generator_options=generator_kwargs(generator, opt),
                        run_id=run_id(config), resume=opt("resume"), budget=budget, run_budget=run_budget, log=notice,
                        extra_config={"xdist_workers": worker.get("workercount"), "gpu_index": gpu_index,
                                      **({"executor": "ray"} if opt("executor") == "ray" else {})})
        if opt("executor") == "ray":
            runner = _on_ray(runner, config)
    except UserError as error:
        pytest.exit(f"crucible: {error}", returncode=4)
    config.stash[RUN_FILE] = runner.path
    return runner


def check_executor(config) -> None:
    """On the controller: --executor ray and pytest-xdist both spread the problems; one at a time."""
    if config.getoption("executor") == "ray" and config.getoption("numprocesses", None):
        raise pytest.UsageError("--executor ray spreads the problems over the Ray cluster itself, and this "
                                "process writes the run file; leave out pytest-xdist's -n (or give -n 0) with it")


def _on_ray(runner, config):
    """The Runner behind a RayRunner, which submits every selected problem to the cluster at once."""
    from harness.executors.ray import RayRunner

    ray_runner = RayRunner(runner, config.getoption("ray_address"))
    ray_runner.prefetch(_loadable(config))
    return ray_runner


def _loadable(config) -> list:
    from harness.problems.problem import load_problem

    problems = []
    for case in selected_cases(config):
        try:
            problems.append(load_problem(case.path, size=config.getoption("size"), level=case.level))
        except UserError:
            continue  # its test reports why (load_case)
    return problems


def summary_lines(config) -> list[str]:
    """Per-level summary read back from the run file, so it covers every xdist worker's records."""
    from harness.records.progress import summary_lines as lines
    from harness.records.results import read_lines, run_file_name

    this_run = run_id(config)
    runs_dir = Path(config.getoption("runs_dir"))
    if this_run is None:
        return []
    path = config.stash.get(RUN_FILE, None) or runs_dir / run_file_name(this_run, "kernelbench", generator_name(config))
    if not Path(path).exists():
        return []
    records = [r for r in read_lines(path) if r.get("type") == "record" and r.get("run_id") == this_run]
    if not records:
        return []
    best = _best_per_problem(records)
    return ["", "Crucible summary (best candidate per problem):"] + lines(best) + [f"run file: {path}"]


def _best_per_problem(records: list[dict]) -> list[dict]:
    best: dict[str, dict] = {}
    for record in records:
        current = best.get(record["problem_id"])
        if current is None or (record["correct"], record.get("speedup") or 0) > (current["correct"], current.get("speedup") or 0):
            best[record["problem_id"]] = record
    return list(best.values())
