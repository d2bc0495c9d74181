"""The pytest plugin's machinery: options, case selection, the runner, the closing summary."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.options import DEVICES, ON_OFF_AUTO, PRECISIONS, SIZES, choice, positive_float, positive_int
from harness.options import typed as _typed

RUN_ID = pytest.StashKey[str]()
RUN_FILE = pytest.StashKey[Path]()


def new_run_id() -> str:
    from harness.results import new_run_id as make

    return make()


def run_id(config) -> str | None:
    """This pytest run's id, the same on the xdist controller and on every worker."""
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        return worker.get("crucible_run_id")
    return config.stash.get(RUN_ID, None)


def add_options(group) -> None:
    add = group.addoption
    add("--generator", default="reference", help="kernel generator to benchmark (default: reference)")
    add("--level", default="1,2,3", help="KernelBench levels, e.g. 1,2 (default: 1,2,3)")
    add("--problem", action="append", default=None, help="glob over problem names or ids, e.g. 'L2/23_*' (repeatable)")
    add("--subset", default="all", help="all, representative or starter (default: all)")
    add("--kernelbench-root", default=None, help="load problems from an upstream KernelBench checkout")
    add("--device", type=_typed(choice("--device", DEVICES)), default="cpu", help="cpu or cuda (default: cpu)")
    add("--size", type=_typed(choice("--size", SIZES)), default="small", help="small or full (default: small)")
    add("--precision", type=_typed(choice("--precision", PRECISIONS)), default="fp32", help="fp32, fp16 or bf16 (default: fp32)")
    add("--runs-dir", default="results/runs", help="where the run file is written (default: results/runs)")
    add("--resume", action="store_true", help="append to the newest matching run file and skip recorded problems")
    add("--trials", type=_typed(positive_int("--trials")), default=5, help="correctness trials per candidate (default: 5)")
    add("--no-timing", action="store_true", help="check correctness only")
    add("--compile-baseline", type=_typed(choice("--compile-baseline", ON_OFF_AUTO)), default="auto",
        help="time torch.compile of the reference too: on, off, auto = cuda only (default: auto)")
    add("--timing-budget-ms", type=_typed(positive_float("--timing-budget-ms")), default=None,
        help="budget of each adaptive timing phase (default: 2000 cuda, 500 cpu)")
    from harness.executors.options import add_executor_arguments
    from harness.llm_options import add_llm_arguments

    add_executor_arguments(add)
    add_llm_arguments(group)


@dataclass(frozen=True)
class Case:
    id: str
    level: int
    path: str


def selected_cases(config) -> list[Case]:
    from harness.suite import parse_levels, problem_files

    try:
        files = problem_files(levels=parse_levels(config.getoption("level")), patterns=config.getoption("problem"),
                              subset=config.getoption("subset"), kernelbench_root=config.getoption("kernelbench_root"))
    except UserError as error:
        raise pytest.UsageError(str(error)) from None
    return [Case(f"L{level}/{path.stem}", level, str(path)) for level, path in files]


def load_case(case: Case, config):
    from harness.problem import load_problem

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
    from harness.llm_options import budgets_from_args, generator_options_from_args
    from harness.options import eval_options
    from harness.runner import Runner, gpu_for_worker, visible_gpu_count

    opt = config.getoption
    worker = getattr(config, "workerinput", {})
    gpu_index = None
    if opt("device") == "cuda":
        gpu_index = gpu_for_worker(worker.get("workerid"), visible_gpu_count())
        if gpu_index is not None:
            import torch

            torch.cuda.set_device(gpu_index)
    try:
        opts = eval_options(device=opt("device"), precision=opt("precision"), size=opt("size"),
                            timing=not opt("no_timing"), trials=opt("trials"), compile_baseline=opt("compile_baseline"),
                            timing_budget_ms=opt("timing_budget_ms"), gpu_index=gpu_index)
        from harness.llm_options import LLM_OPTIONS

        if opt("executor") == "ray":
            from harness.executors import import_ray

            import_ray()  # says how to install it before the run file is started
        namespace = argparse.Namespace(**{dest: opt(dest) for _, dest, *_ in LLM_OPTIONS})
        budget, run_budget = budgets_from_args(namespace)
        runner = Runner(opt("generator"), opts, opt("runs_dir"), generator_options=generator_options_from_args(namespace),
                        run_id=run_id(config), resume=opt("resume"), budget=budget, run_budget=run_budget,
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
    from harness.problem import load_problem

    problems = []
    for case in selected_cases(config):
        try:
            problems.append(load_problem(case.path, size=config.getoption("size"), level=case.level))
        except UserError:
            continue  # its test reports why (load_case)
    return problems


def summary_lines(config) -> list[str]:
    """Per-level summary read back from the run file, so it covers every xdist worker's records."""
    from harness.progress import summary_lines as lines
    from harness.results import read_lines, run_file_name

    this_run = run_id(config)
    runs_dir = Path(config.getoption("runs_dir"))
    if this_run is None:
        return []
    path = config.stash.get(RUN_FILE, None) or runs_dir / run_file_name(this_run, "kernelbench", config.getoption("generator"))
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
