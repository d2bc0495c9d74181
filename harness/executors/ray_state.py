"""Connecting to a Ray cluster, and the run's shared state there: one ledger actor for the run.

The actor lives on the driver's node, so that losing a worker node never loses the run's spending.
"""

from __future__ import annotations

import os
import time

from harness.errors import UserError
from harness.executors.ledger import GO, STOP
from harness.records.usage import Usage

# how long a call waits before asking the ledger again when other calls must report first
WAIT_S = 0.05


def connect(ray, address: str | None) -> None:
    """Join the cluster at ``address`` (None: $RAY_ADDRESS, else a Ray instance started here)."""
    if ray.is_initialized():
        return
    try:
        ray.init(address=address, logging_level="WARNING", include_dashboard=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise UserError(f"--ray-address {address!r}: could not join a Ray cluster there ({error}). Start one with "
                        "`ray start --head` and pass the address it prints, or leave out --ray-address to start "
                        "Ray on this machine.") from None


# The driver's settings that a task's LLM provider reads from its environment (docs/LLM.md)
FORWARDED_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CRUCIBLE_LLM_MODEL", "CRUCIBLE_PRICES", "CRUCIBLE_LLM_CACHE",
                 "CRUCIBLE_LLM_CONCURRENCY", "CRUCIBLE_CASSETTE", "CRUCIBLE_REPLAY_MODE", "CRUCIBLE_CUDA_HOLD",
                 "CRUCIBLE_SPARE_WORKER")


def forwarded_env(environ=os.environ) -> dict[str, str]:
    return {name: environ[name] for name in FORWARDED_ENV if name in environ}


def start_ledger(ray, run_budget, spent: Usage | None = None):
    """The run's ledger actor (harness/executors/ledger.py), on this (the driver's) node."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from harness.executors.ledger import RunLedger
    from harness.llm.providers import _concurrency

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    actor = ray.remote(RunLedger).options(num_cpus=0, scheduling_strategy=here)
    return actor.remote(run_budget, (spent or Usage()).to_dict(), _concurrency())


class LedgerClient:
    """What an LLM session inside a task sees of the ledger actor (see harness/llm/session.py)."""

    def __init__(self, actor, key: str):
        self.actor = actor
        self.key = key

    def _call(self, method: str, *args):
        import ray

        return ray.get(getattr(self.actor, method).remote(*args))

    def spent(self) -> Usage:
        return Usage.from_dict(self._call("spent"))

    def acquire(self) -> str | None:
        """Wait for the ledger's go; a reason string where the run's limit is spent."""
        while True:
            answer, reason = self._call("acquire", self.key)
            if answer == GO:
                return None
            if answer == STOP:
                return reason
            time.sleep(WAIT_S)

    def release(self, usage: Usage) -> None:
        self._call("release", self.key, usage.to_dict())
