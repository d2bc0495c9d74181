"""The Ray executor: one Ray task per problem anywhere on a cluster; this process writes the run file.

Each task needs one GPU (``--device cuda``) or ``cpus_per_task`` CPU slots (``--device cpu``) and
runs the problem's whole work (harness/executors/ray_task.py). Records come back as tasks finish
(``ray.wait``) and only this driver appends them, so a problem is recorded once: a task whose node
is lost is run again elsewhere by Ray (``max_retries``) and its records arrive once, from the start
that finished. A problem whose every start lost its node gets a ``crashed`` record that says so,
and the run goes on: an evaluation that takes a node down is a verdict, not a lost run.
"""

from __future__ import annotations

from dataclasses import replace

from harness.errors import UserError
from harness.executors import import_ray
from harness.executors.ray_state import connect, forwarded_env, start_ledger
from harness.executors.ray_task import TaskSpec, solve

# Starts of one problem's task that may lose their node before the problem is given up as crashed
MAX_RETRIES = 2


class RaySweep:
    """Runs problems on a Ray cluster for a driver-side Runner, which owns the run file."""

    def __init__(self, runner, address: str | None = None, *, cpus_per_task: float = 1, max_retries: int = MAX_RETRIES):
        self.ray = import_ray()
        connect(self.ray, address)
        self.runner = runner
        self.max_retries = max_retries
        self.ledger = start_ledger(self.ray, runner.run_budget, runner.spent)
        # one secret for the whole run, as locally: every task draws the same inputs for a problem
        opts = replace(runner.opts, secret=runner.cache.secret)
        self.spec = TaskSpec(runner.generator_name, dict(runner.generator_options or {}), opts, runner.run_id,
                             runner.budget, runner.run_budget)
        needs = {"num_gpus": 1, "num_cpus": 1} if opts.device == "cuda" else {"num_cpus": cpus_per_task}
        check_capacity(self.ray.cluster_resources(), needs, address)
        env = {"env_vars": forwarded_env()}
        self.task = self.ray.remote(solve).options(max_retries=max_retries, retry_exceptions=False, runtime_env=env,
                                                   **needs)
        self.pending: dict = {}   # ObjectRef -> Problem

    def submit(self, problem):
        ref = self.task.remote(self.spec, problem, self.ledger)
        self.pending[ref] = problem
        return ref

    def next_finished(self, refs=None) -> tuple[object, list[dict]]:
        """Wait for a task among ``refs`` (default: any pending) to finish; its problem and its
        records, appended to the run file."""
        ready, _ = self.ray.wait(list(refs or self.pending), num_returns=1)
        problem = self.pending.pop(ready[0])
        return problem, self._write(problem, self._records(ready[0], problem))

    def _records(self, ref, problem) -> list[dict]:
        from ray.exceptions import RayTaskError

        try:
            return self.ray.get(ref)
        except RayTaskError as error:  # Crucible's own code failed inside the task: a bug, recorded
            return [self._failure(problem, error.as_instanceof_cause(), lost=False)]
        except self._lost_errors() as error:
            self.ray.get(self.ledger.forget.remote(problem.id))
            return [self._failure(problem, error, lost=True)]

    def _lost_errors(self) -> tuple[type, ...]:
        from ray import exceptions

        names = ("WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "OutOfMemoryError",
                 "TaskUnschedulableError", "ObjectLostError")
        return tuple(getattr(exceptions, name) for name in names if hasattr(exceptions, name))

    def _failure(self, problem, error: BaseException, lost: bool) -> dict:
        from harness.judge.evaluate import judge_failure_record

        identity = {"generator": self.runner.generator_name, "attempt": 0}
        record = judge_failure_record(problem, "", self.runner.opts, identity, error)
        if lost:
            starts = self.max_retries + 1
            record.update(status="crashed", correct=False,
                          reason=f"node_lost: each of {starts} start(s) of this problem's task lost its Ray node or "
                                 f"worker process ({type(error).__name__}); the problem's work is taken to bring "
                                 f"its node down")
        record.update(run_id=self.runner.run_id, usage={}, provenance={}, executor={"name": "ray", "lost": lost})
        return record

    def _write(self, problem, records: list[dict]) -> list[dict]:
        """Append records whose (problem, generator, attempt) this run file does not hold yet."""
        written = []
        for record in records:
            key = (record["problem_id"], record["generator"], record.get("attempt", 0))
            if key in self.runner.done:
                continue
            self.runner.writer.append(record)
            self.runner.done.add(key)
            written.append(record)
        return written

    def close(self) -> None:
        for ref in list(self.pending):
            self.ray.cancel(ref, force=True)
        self.pending.clear()
        self.ray.kill(self.ledger)


def check_capacity(resources: dict, needs: dict, address: str | None) -> None:
    """A task the cluster can never place would wait forever: say so instead."""
    names = {"num_gpus": "GPU", "num_cpus": "CPU"}
    for need, amount in needs.items():
        have = resources.get(names[need], 0)
        if have < amount:
            raise UserError(f"--executor ray: the Ray cluster at {address or 'this machine'} has {have:g} "
                            f"{names[need]} slot(s), and each problem's task needs {amount:g}. Start nodes with "
                            f"`ray start --num-gpus N` (or --num-cpus N), or run with --executor local.")


def run_sweep(runner, problems, progress, address: str | None = None) -> list[dict]:
    """The Ray counterpart of harness/executors/local.py's run_sweep: the same records, any order."""
    sweep = RaySweep(runner, address)
    try:
        for problem in problems:
            if runner.already_done(problem):
                progress.skip(problem.id)
            else:
                sweep.submit(problem)
        records: list[dict] = []
        while sweep.pending:
            problem, new = sweep.next_finished()
            records += new
            if new:
                progress.done(problem.id, new)
            else:
                progress.skip(problem.id)
        return records
    finally:
        sweep.close()


class RayRunner:
    """The pytest plugin's runner on Ray: every selected problem is submitted at once, and each
    test waits for its own problem's records (written by this process, the run file's only writer)."""

    def __init__(self, runner, address: str | None = None):
        self.runner = runner
        self.path = runner.path
        self.sweep = RaySweep(runner, address)
        self.refs: dict[str, object] = {}

    def prefetch(self, problems) -> None:
        for problem in problems:
            if problem.id not in self.refs and not self.runner.already_done(problem):
                self.refs[problem.id] = self.sweep.submit(problem)

    def already_done(self, problem) -> bool:
        return self.runner.already_done(problem)

    def run_problem(self, problem) -> list[dict]:
        self.prefetch([problem])
        _, records = self.sweep.next_finished([self.refs.pop(problem.id)])
        return records

    def close(self) -> None:
        self.sweep.close()
