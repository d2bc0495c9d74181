"""One problem's work inside a Ray task: the generator's loop and every evaluation it asks for.

The task builds the same Runner the local executor uses, so the judge and its isolated worker
processes run here exactly as they do locally. It writes nothing: its records go back to the
driver, the run file's only writer, each stamped with the node and GPU that produced it.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class TaskSpec:
    """What every task of a run shares; a problem travels beside it."""

    generator: str
    generator_options: dict
    opts: object          # EvalOptions, with the run's secret, so that every task draws the same inputs
    run_id: str
    budget: object        # Budget per problem
    run_budget: object    # Budget of the run, enforced through the ledger


def solve(spec: TaskSpec, problem, ledger) -> list[dict]:
    from harness.executors.ray_state import LedgerClient
    from harness.executors.runner import Runner

    start = _call(ledger.started.remote(problem.id))
    where = placement()
    records: list[dict] = []  # what the Runner would have appended to the run file, for the driver
    runner = Runner(spec.generator, _here(spec.opts), generator_options=dict(spec.generator_options),
                    run_id=spec.run_id, budget=spec.budget, run_budget=spec.run_budget,
                    sink=records.append, run_ledger=LedgerClient(ledger, problem.id))
    runner.run_problem(problem)
    for record in records:
        record["executor"] = {"name": "ray", **where, "task_start": start}
    return records


def _call(ref):
    import ray

    return ray.get(ref)


def _here(opts):
    """Ray hands a GPU task its GPU as the only one visible (CUDA_VISIBLE_DEVICES): device 0 here."""
    return replace(opts, gpu_index=0) if opts.device == "cuda" else opts


def placement() -> dict:
    """Which node and GPU this task runs on, for each record's provenance."""
    import ray

    context = ray.get_runtime_context()
    gpus = [str(g) for g in ray.get_gpu_ids()]
    return {"node_id": context.get_node_id(), "node_ip": ray.util.get_node_ip_address(),
            "hostname": platform.node(), "gpu_ids": gpus, "gpu_name": _gpu_name() if gpus else None,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


def _gpu_name() -> str | None:
    try:
        import torch

        return torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001 - a name is provenance; the run goes on without it
        return None
