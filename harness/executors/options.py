"""The executor options (``--executor``, ``--ray-address``), shared by the CLI and the pytest plugin."""

from __future__ import annotations

from harness.executors import EXECUTORS
from harness.options import choice, typed

EXECUTOR_OPTIONS = (
    ("--executor", "executor", typed(choice("--executor", EXECUTORS)), "local",
     "where problems run: local (this process, one after another) or ray (one Ray task per problem on a "
     "Ray cluster; needs pip install crucible-kernels[ray]) (default: local)"),
    ("--ray-address", "ray_address", str, None,
     "with --executor ray: the cluster to join, e.g. 10.0.0.5:6379 or auto "
     "(default: $RAY_ADDRESS, else a Ray instance started on this machine)"),
)


def add_executor_arguments(add) -> None:
    """``add``: argparse's ``add_argument`` or a pytest group's ``addoption``."""
    for flag, dest, kind, default, text in EXECUTOR_OPTIONS:
        add(flag, dest=dest, type=kind, default=default, help=text)


def run_sweep(executor: str, runner, problems, progress, ray_address: str | None = None) -> list[dict]:
    """Run every problem not yet recorded with the chosen executor; this run's new records."""
    if executor == "ray":
        from harness.executors.ray import run_sweep as on_ray

        return on_ray(runner, problems, progress, address=ray_address)
    from harness.executors.local import run_sweep as here

    return here(runner, problems, progress)
