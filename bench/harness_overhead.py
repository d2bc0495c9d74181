"""The harness's own overhead per evaluation: worker spawn and load, transfer and checks per call.

Usage: python bench/harness_overhead.py [--device cpu|cuda] [--repeats 3]
Prints a table: spawn+import+load seconds, round-trip milliseconds per correctness call (judge ->
worker -> judge, minus the same call in-process), and the judge's check time per call. The start-up
is measured three ways: a worker spawned on demand (``python -m harness.judge.worker``), one forked on
demand from the fork server, and one adopted from a spare started ahead (the defaults are the
fork server and spares; see docs/HARNESS.md), which is ready by the time the judge needs it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--elements", type=int, default=1 << 20, help="elements per input tensor")
    args = parser.parse_args()
    import torch

    from harness.judge import checks
    from harness.judge.evaluate import EvalCache, EvalOptions
    import os

    from harness.judge.workers import (_FORK_SERVERS, WorkerLimits, WorkerSession, drain_spare_workers,
                                       settle_spare_workers)
    from harness.problems.problem import load_problem
    from harness.judge.reference import ReferenceEnv

    problem = load_problem(ROOT / "tests" / "fixtures" / "problems" / "1_Scale_ReLU.py", size="full", level=1)
    problem.source = problem.source.replace("batch_size = 64", f"batch_size = {max(1, args.elements // 1000)}")
    opts = EvalOptions(device=args.device)
    env = ReferenceEnv(problem, args.device, "fp32", secret=5)
    source = problem.source + "\nModelNew = Model\n"
    spawn, forked, adopted, trip, local, check = [], [], [], [], [], []
    plain = {"CRUCIBLE_SPARE_WORKER": "0", "CRUCIBLE_FORK_SERVER": "0"}
    fork = {"CRUCIBLE_SPARE_WORKER": "0", "CRUCIBLE_FORK_SERVER": "1"}
    spare = {"CRUCIBLE_SPARE_WORKER": "1", "CRUCIBLE_FORK_SERVER": "1"}
    # (settings, where the start-up time goes); None: a session that only readies what the next ones use
    runs = ([(plain, spawn)] * args.repeats + [(fork, None)] * 2 + [(fork, forked)] * args.repeats
            + [(spare, None)] + [(spare, adopted)] * args.repeats)
    for settings, starts in runs:
        os.environ.update(settings)
        settle_spare_workers()  # the spare started by the previous session is ready, as between two problems
        if starts is forked:
            _FORK_SERVERS.server.poll_ready(120)  # up, as it is after a run's first problems
        t0 = time.perf_counter()
        with WorkerSession(args.device, WorkerLimits()) as session:
            session.request({"op": "load", "source": source, "init_args": env.init_args, "init_seed": env.init_seed,
                             "state_dict": env.state_dict(), "device": args.device, "precision": "fp32",
                             "flags": env.flags, "gpu_index": None}, 300, "load")
            if starts is None:
                continue
            starts.append(time.perf_counter() - t0)
            for i in range(20):
                inputs = env.make_inputs(i)
                expected = env.expected(inputs)
                t1 = time.perf_counter()
                reply = session.request({"op": "call", "inputs": inputs, "poison_bytes": 0}, 60, "call")
                trip.append(time.perf_counter() - t1)
                t2 = time.perf_counter()
                checks.compare_outputs(expected, list(reply["outputs"]), 1e-4, 1e-4)
                if args.device == "cuda":
                    torch.cuda.synchronize()
                check.append(time.perf_counter() - t2)
                t3 = time.perf_counter()
                with torch.no_grad():
                    env.model(*inputs)
                if args.device == "cuda":
                    torch.cuda.synchronize()
                local.append(time.perf_counter() - t3)
    drain_spare_workers()
    elements = env.make_inputs(0)[0].numel()
    print(f"device {args.device}, {elements:,} elements per input, {3 * args.repeats} workers x 20 calls")
    print("spawn+import+load s | forked+load s | with a spare s | round trip ms | in-process call ms | "
          "transfer overhead ms | check ms")
    print(f"{statistics.median(spawn):19.2f} | {statistics.median(forked):13.2f} | {statistics.median(adopted):14.2f} | "
          f"{1e3 * statistics.median(trip):13.3f} | "
          f"{1e3 * statistics.median(local):18.3f} | {1e3 * (statistics.median(trip) - statistics.median(local)):20.3f} | "
          f"{1e3 * statistics.median(check):8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
