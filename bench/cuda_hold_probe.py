"""Could a kernel that fills every SM hide the first launch without opening a window for side streams?

    python bench/cuda_hold_probe.py [--hold-us 200] [--problem 'L2/23_*' ...]

CUDA only, outside the harness's judge and worker, with the worker's own hold
(harness.worker.hold.Hold; call BB2 of 2026-12-07 ran this script's first version at d5b2bc7, with
its own copy of the kernel, which did not record a sequence number). Background (docs/HARNESS.md,
"What the rest is"): the worker's window opens on a GPU that the per-call synchronize left idle, so
every timed call is charged the host's launch of its first kernel, which do_bench's back-to-back
loop never pays. A plain spin queued before the window hides that launch, but a single-block spin
leaves the other SMs free, and work a candidate starts on a side stream would run there unmeasured.

The variant measured here, "hold": synchronize, flush, synchronize, then a Triton kernel whose blocks
take every thread slot of every SM (two blocks of 1024 threads where an SM has 2048) and spin on %globaltimer for
--hold-us, then the start event and the call. Since the GPU is idle when the hold is launched, all of
its blocks are resident before the host can launch anything else; a kernel launched on any other
stream afterwards finds no free warp slot until the hold's blocks end, which is when the window opens.

Part 1, exclusivity: after each hold, a one-warp kernel on a side stream (default priority, then the
highest) stamps %globaltimer when it starts. The hold's blocks record their SM and start and end
times. A stamp earlier than the last hold block's end means side work ran inside the hold.
Part 2, timing: the medians of do_bench, the protocol (synchronize, flush, start event, call,
synchronize, end event) and the protocol with the hold, on each problem at full size.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def stamp_kernel():
    """A one-warp kernel that writes %globaltimer when it runs: when a side stream got an SM."""
    import triton
    import triton.language as tl
    from triton.language.extra.cuda import globaltimer

    @triton.jit
    def stamp(out):
        tl.store(out, globaltimer())

    return stamp


def exclusivity(hold, trials: int) -> dict:
    import torch

    stamp_kernel_ = stamp_kernel()
    results = {}
    for label, priority in (("side stream", 0), ("side stream, highest priority", -1)):
        stream = torch.cuda.Stream(priority=priority)  # torch clamps -1 to the device's highest
        stamp = torch.zeros(1, dtype=torch.int64, device="cuda")
        with torch.cuda.stream(stream):
            stamp_kernel_[(1,)](stamp, num_warps=1)  # compiled here, not inside a trial
        torch.cuda.synchronize()
        early, margins, spreads, coverage = 0, [], [], []
        for _ in range(trials):
            torch.cuda.synchronize()
            hold.launch()
            with torch.cuda.stream(stream):
                stamp_kernel_[(1,)](stamp, num_warps=1)
            torch.cuda.synchronize()
            rows = hold.rows()
            starts = [r[1] for r in rows]
            ends = [r[2] for r in rows]
            per_sm = {}
            for r in rows:
                per_sm[r[0]] = per_sm.get(r[0], 0) + 1
            coverage.append((len(per_sm), max(per_sm.values())))
            margin_us = (stamp.item() - max(ends)) / 1000
            margins.append(margin_us)
            spreads.append(((max(starts) - min(starts)) / 1000, (max(ends) - min(ends)) / 1000))
            if stamp.item() < max(ends):
                early += 1
        results[label] = {"early": early, "trials": trials, "margin_us_min": min(margins),
                          "margin_us_median": statistics.median(margins),
                          "start_spread_us_max": max(s for s, _ in spreads),
                          "end_spread_us_max": max(e for _, e in spreads),
                          "sms_covered_min": min(c for c, _ in coverage), "blocks_per_sm_max": max(b for _, b in coverage)}
    return results


def timed(model, inputs, flush, hold=None, calls=30) -> float:
    import torch

    times = []
    for _ in range(calls + 3):
        torch.cuda.synchronize()
        flush.zero_()
        if hold is not None:
            torch.cuda.synchronize()  # the GPU idle when the hold is launched: all its blocks resident first
            hold.launch()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        model(*inputs)
        torch.cuda.synchronize()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times[3:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problem", action="append", default=None, help="problem glob (repeatable)")
    parser.add_argument("--hold-us", type=float, default=200.0, help="how long the hold spins (default 200 us)")
    parser.add_argument("--trials", type=int, default=50, help="exclusivity trials per side stream (default 50)")
    args = parser.parse_args()
    import torch
    import triton.testing

    from harness.reference import ReferenceEnv
    from harness.suite import load_selected

    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    from harness.worker.hold import Hold

    hold = Hold(torch, args.hold_us)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"device {torch.cuda.get_device_name(0)}: {sms} SMs, hold of {hold.blocks} blocks x "
          f"{hold.threads} threads, {hold.registers} registers a thread, {args.hold_us:g} us")
    for label, row in exclusivity(hold, args.trials).items():
        print(f"exclusivity, {label}: stamp before the hold's end in {row['early']}/{row['trials']}; stamp - hold end "
              f"min {row['margin_us_min']:.2f} us, median {row['margin_us_median']:.2f} us; hold starts spread "
              f"<= {row['start_spread_us_max']:.2f} us, ends <= {row['end_spread_us_max']:.2f} us; SMs covered "
              f">= {row['sms_covered_min']}/{sms}, blocks on one SM <= {row['blocks_per_sm_max']}")
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4 + 1, dtype=torch.int32, device="cuda")
    print("problem | do_bench ms | protocol (ratio) | protocol+hold (ratio)")
    for pattern in args.problem or ["L2/23_*", "L1/95_*", "L2/9_*", "L1/47_*"]:
        problem = load_selected("full", patterns=[pattern])[0]
        env = ReferenceEnv(problem, "cuda", "fp32", secret=1)
        inputs = env.make_inputs(123)
        model = env.model
        with torch.no_grad():
            bench = triton.testing.do_bench(lambda: model(*inputs), warmup=50, rep=300, return_mode="median")
            plain = timed(model, inputs, flush)
            held = timed(model, inputs, flush, hold)
        print(f"{problem.id} | {bench:.3f} | {plain:.3f} ({plain / bench:.3f}) | {held:.3f} ({held / bench:.3f})")
        inputs = model = env = None  # freed before the next problem's
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
