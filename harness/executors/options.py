"""Run a sweep with the executor the option table's ``--executor`` chose."""

from __future__ import annotations

def run_sweep(executor: str, runner, problems, progress, ray_address: str | None = None) -> list[dict]:
    """Run every problem not yet recorded with the chosen executor; this run's new records."""
    if executor == "ray":
        from harness.executors.ray import run_sweep as on_ray

        return on_ray(runner, problems, progress, address=ray_address)
    from harness.executors.local import run_sweep as here

    return here(runner, problems, progress)
