"""Can the worker's timed window keep its device-wide synchronize and still agree with do_bench?
(CUDA only; prepared 2026-12-05 for the open do_bench criterion of issue #2, not yet run.)

    python bench/cuda_timer_correction.py [--problem 'L1/95_*' ...] [--calls 40]

The worker closes each timed window with a device-wide synchronize and then the end event, so work a
candidate leaves on a side stream is counted (docs/HARNESS.md, "Timing and do_bench"). The end event
then also carries the synchronize's own round trip R (the host seeing the device idle, returning,
recording the event, the device reaching it): about 30-60 us a call, up to a fifth of a 0.4 ms
problem. The corrected window measured here keeps the synchronize and takes R out:

    t_stream = start -> e1, e1 recorded right after the call returns (the current stream's work)
    t_sync   = start -> e2, e2 recorded after the device-wide synchronize (all streams, plus R)
    corrected = max(t_stream, t_sync - R_floor)

R_floor is the least R over empty windows (the same steps with no call) measured before the calls,
so corrected >= the time until every stream's work has finished whenever a call's R is at least the
floor: side-stream work still counts in full, with no threshold for it to hide under. Printed per
problem: do_bench's median, the protocol as the worker runs it, the corrected window, each over
do_bench; then a side-stream check: the same work on the current stream and left on a side stream,
whose corrected times must agree while t_stream alone misses the side stream's work.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def round_trip_floor(torch, flush, windows: int = 25) -> float:
    """The least synchronize round trip (ms) over empty windows: flush, start, e1, synchronize, e2."""
    trips = []
    for _ in range(windows):
        torch.cuda.synchronize()
        flush.zero_()
        start, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        start.record()
        e1.record()
        torch.cuda.synchronize()
        e2.record()
        torch.cuda.synchronize()
        trips.append(e1.elapsed_time(e2))
    return min(trips)


def windows(torch, call, flush, calls: int) -> tuple[list[float], list[float]]:
    """(t_stream, t_sync) per call, the worker's protocol plus the e1 event; three warm-up calls."""
    streams, syncs = [], []
    for number in range(calls + 3):
        torch.cuda.synchronize()
        flush.zero_()
        start, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        start.record()
        output = call()
        e1.record()
        torch.cuda.synchronize()
        e2.record()
        torch.cuda.synchronize()
        del output
        if number >= 3:
            streams.append(start.elapsed_time(e1))
            syncs.append(start.elapsed_time(e2))
    return streams, syncs


def corrected(streams: list[float], syncs: list[float], floor: float) -> float:
    return statistics.median(max(s, t - floor) for s, t in zip(streams, syncs))


def side_stream_check(torch, flush, floor: float, calls: int) -> list[str]:
    """The same elementwise work on the current stream and on a side stream the call does not wait for."""
    x = torch.randn(64 << 20, device="cuda")
    side = torch.cuda.Stream()

    def work(t):
        for _ in range(8):
            t = t * 1.0001 + 0.5
        return t

    def honest():
        return work(x)

    def deferred():
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            return work(x)  # returned at once; the work runs on after the call

    lines = []
    for name, call in (("current stream", honest), ("side stream", deferred)):
        streams, syncs = windows(torch, call, flush, calls)
        lines.append(f"{name}: t_stream {statistics.median(streams):.3f} ms, t_sync {statistics.median(syncs):.3f} ms, "
                     f"corrected {corrected(streams, syncs, floor):.3f} ms")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problem", action="append", default=None)
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    import torch
    import triton.testing

    from harness.reference import ReferenceEnv
    from harness.suite import load_selected

    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4 + 1, dtype=torch.int32, device="cuda")  # as the worker's
    floor = round_trip_floor(torch, flush)
    print(f"{torch.cuda.get_device_name(0)}: synchronize round trip floor R_floor = {1e3 * floor:.1f} us")
    print("problem | do_bench ms | protocol ms (/do_bench) | corrected ms (/do_bench) | t_stream ms (/do_bench)")
    patterns = args.problem or ["L1/95_*", "L2/23_*", "L1/12_*", "L1/47_*", "L2/9_*", "L3/1_*", "L1/1_*"]
    for pattern in patterns:
        problem = load_selected("full", patterns=[pattern])[0]
        env = ReferenceEnv(problem, "cuda", "fp32", secret=1)
        inputs = env.make_inputs(123)
        with torch.no_grad():
            bench = triton.testing.do_bench(lambda: env.model(*inputs), warmup=50, rep=300, return_mode="median")
            streams, syncs = windows(torch, lambda: env.model(*inputs), flush, args.calls)
        plain, fixed, stream = statistics.median(syncs), corrected(streams, syncs, floor), statistics.median(streams)
        print(f"{problem.id} | {bench:.3f} | {plain:.3f} ({plain / bench:.3f}) | {fixed:.3f} ({fixed / bench:.3f}) | "
              f"{stream:.3f} ({stream / bench:.3f})")
        del env, inputs
        torch.cuda.empty_cache()
    for line in side_stream_check(torch, flush, floor, args.calls):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
