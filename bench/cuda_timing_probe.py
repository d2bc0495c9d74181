"""Why eager medians can sit above triton.testing.do_bench's: the parts of the worker's protocol,
one at a time, outside the harness (CUDA only).

    python bench/cuda_timing_probe.py [--problem 'L1/19_*' --problem 'L2/23_*']

For each problem at full size, the median of the reference's forward under:
  do_bench        triton.testing.do_bench (back to back, its own L2 flush)
  protocol        the worker's protocol: synchronize, flush, start event, call, synchronize, end
                  event; the previous output kept alive (as the worker keeps it for the judge)
  protocol+gapN   the same with N ms of host idle between calls (the judge's work between batches;
                  --gap-ms, repeatable, default 20)
  protocol+churn  a tensor the size of the inputs made, filled and handed back to the driver before
                  each call, outside the window (the judge's refresh and cache release on large sets)
  protocol+delay  a ~200 us GPU spin between the flush and the start event, so the call is queued
                  before its window opens (launch latency hidden, as in a queue of calls)
  protocol+malloc the caching allocator emptied before each call (a cudaMalloc inside the window)
  protocol+ipc    the input made by another process and received by CUDA IPC, as the worker's are
  protocol-endnow the end event recorded right after the call, before the device-wide synchronize
                  (what the synchronize before the end event costs)
  protocol+rotate each call on the next of --sets fresh input sets, as the worker's timed calls are
  do_bench+rotate do_bench cycling over the same input sets
  protocol+rotate+touch  protocol+rotate with one element of every 2 MiB of the call's inputs read
                  after the flush, outside the window (page_touch_views, as the worker did for one
                  call on 2026-12-06): the pages' address translations warm, about one cache line a
                  page in L2 (is the fresh inputs' cost translation, not data?)
  protocol+flush256  the protocol with do_bench's own flush (256 MiB zeroed) instead of the
                  worker's twice the L2: a longer flush gives the host more time to launch the call
                  while the GPU is still busy before the window (is the rest launch latency?)
Ratios are to do_bench. --quick measures do_bench, protocol, protocol+delay, protocol+flush256 and
the rotate variants alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


PAGE_BYTES = 2 << 20  # the page size of CUDA's device allocations


def page_touch_views(inputs) -> list:
    """One byte of every 2 MiB page of each input tensor's storage, as strided byte views (each
    storage once, any layout). Tried in the worker on 2026-12-06 and taken out again: docs/HARNESS.md."""
    import torch

    views, seen = [], set()
    for tensor in inputs:
        if type(tensor) is not torch.Tensor:
            continue
        storage = tensor.untyped_storage()
        if storage.nbytes() == 0 or storage.data_ptr() in seen:
            continue
        seen.add(storage.data_ptr())
        views.append(torch.empty(0, dtype=torch.uint8, device=tensor.device).set_(storage)[::PAGE_BYTES])
    return views


def protocol(model, inputs, calls=15, gap_s=0.0, delay_cycles=0, malloc=False, flush=None, churn_bytes=0,
             end_now=False, rotate=None, touch=False):
    import torch

    times, previous = [], None
    for call in range(calls + 3):
        if rotate:
            inputs = rotate[call % len(rotate)]
        if gap_s:
            time.sleep(gap_s)
        if churn_bytes:
            scratch = torch.empty(churn_bytes // 4, dtype=torch.float32, device="cuda")
            scratch.normal_()
            del scratch
            torch.cuda.empty_cache()
        if malloc:
            previous = None
            torch.cuda.empty_cache()
        torch.cuda.synchronize()
        flush.zero_()
        if touch:
            for view in page_touch_views(inputs):
                view.max()
        if delay_cycles:
            torch.cuda._sleep(delay_cycles)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        output = model(*inputs)
        if not end_now:
            torch.cuda.synchronize()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
        previous = output  # noqa: F841 - kept alive like the worker's retained outputs
    return statistics.median(times[3:])


def _producer(queue, done, problem_id):
    import torch

    from harness.reference import ReferenceEnv
    from harness.suite import load_selected

    problem = load_selected("full", patterns=[problem_id])[0]
    env = ReferenceEnv(problem, "cuda", "fp32", secret=1)
    inputs = env.make_inputs(123)
    queue.put(inputs)
    done.wait()
    del inputs
    torch.cuda.ipc_collect()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problem", action="append", default=None)
    parser.add_argument("--gap-ms", action="append", type=float, default=None, help="host idle between calls (repeatable)")
    parser.add_argument("--sets", type=int, default=4, help="input sets for the rotate variants (default 4)")
    parser.add_argument("--quick", action="store_true",
                        help="do_bench, protocol, protocol+delay, protocol+flush256 and the rotate variants only")
    args = parser.parse_args()
    gaps = args.gap_ms or [20.0]
    import torch
    import torch.multiprocessing as mp
    import triton.testing

    from harness.reference import ReferenceEnv
    from harness.suite import load_selected

    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4 + 1, dtype=torch.int32, device="cuda")
    flush256 = torch.empty(256 << 20, dtype=torch.int8, device="cuda")  # triton.testing.do_bench's size
    # ~200 us of spin at the SM clock (torch.cuda._sleep counts cycles; clock_rate is in kHz)
    clock_khz = getattr(torch.cuda.get_device_properties(0), "clock_rate", None)
    delay_cycles = int(200e-6 * clock_khz * 1e3) if clock_khz else 400_000
    rows = []
    for pattern in args.problem or ["L1/19_*", "L2/23_*"]:
        problem = load_selected("full", patterns=[pattern])[0]
        env = ReferenceEnv(problem, "cuda", "fp32", secret=1)
        inputs = env.make_inputs(123)
        model = env.model
        with torch.no_grad():
            bench = triton.testing.do_bench(lambda: model(*inputs), warmup=50, rep=300, return_mode="median")
            row = {"problem": problem.id, "do_bench": bench,
                   "protocol": protocol(model, inputs, flush=flush),
                   "protocol+delay": protocol(model, inputs, delay_cycles=delay_cycles, flush=flush),
                   "protocol+flush256": protocol(model, inputs, flush=flush256)}
            for gap in [] if args.quick else gaps:
                row[f"protocol+gap{gap:g}"] = protocol(model, inputs, gap_s=gap / 1e3, flush=flush, calls=8 if gap > 100 else 15)
            if not args.quick:
                input_bytes = sum(t.numel() * t.element_size() for t in inputs if isinstance(t, torch.Tensor))
                row.update({"protocol+churn": protocol(model, inputs, churn_bytes=input_bytes, flush=flush),
                            "protocol+malloc": protocol(model, inputs, malloc=True, calls=8, flush=flush),
                            "protocol-endnow": protocol(model, inputs, end_now=True, flush=flush)})
            if args.sets > 1:
                sets = [inputs] + [env.make_inputs(124 + i) for i in range(args.sets - 1)]
                row["protocol+rotate"] = protocol(model, inputs, rotate=sets, calls=16, flush=flush)
                row["protocol+rotate+touch"] = protocol(model, inputs, rotate=sets, calls=16, flush=flush, touch=True)
                turn = [0]

                def rotating():
                    turn[0] += 1
                    return model(*sets[turn[0] % len(sets)])

                row["do_bench+rotate"] = triton.testing.do_bench(rotating, warmup=50, rep=300, return_mode="median")
                del sets, rotating  # the closure holds the sets too; free them before the next problem
        del inputs
        torch.cuda.empty_cache()
        if args.quick:
            rows.append(row)
            continue
        context = mp.get_context("spawn")
        queue, done = context.Queue(), context.Event()
        child = context.Process(target=_producer, args=(queue, done, problem.id))
        child.start()
        received = queue.get(timeout=120)
        with torch.no_grad():
            row["protocol+ipc"] = protocol(model, received, flush=flush)
        del received
        done.set()
        child.join(timeout=60)
        rows.append(row)
        torch.cuda.empty_cache()
    names = [k for k in rows[0] if k != "problem"]
    print("problem | " + " | ".join(names) + "   (ms; ratio to do_bench)")
    for row in rows:
        cells = [f"{row[n]:.3f} ({row[n] / row['do_bench']:.3f})" for n in names]
        print(f"{row['problem']} | " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
