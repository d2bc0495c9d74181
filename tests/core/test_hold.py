"""The SM-filling hold queued before each timed CUDA window (harness.judge.worker.hold).

The record checks run everywhere; the hold itself needs a GPU (marked ``gpu``)."""

from __future__ import annotations

import pytest

from harness.judge.worker.guards import flags_for
from harness.judge.worker.hold import START_SPREAD_LIMIT_US, block_shape, hold_findings

HOLD_NS = 200_000


def rows(blocks=8, sequence=7, start=1_000_000, spread_ns=500, spin_ns=HOLD_NS + 50):
    return [[b // 2, start + (b * spread_ns) // blocks, start + (b * spread_ns) // blocks + spin_ns, sequence]
            for b in range(blocks)]


def test_block_shape_takes_every_thread_slot_of_an_sm():
    assert block_shape(2048) == (1024, 2)      # compute capability 8.0 and 9.0
    assert block_shape(1536) == (512, 3)       # 8.6 and 8.9
    assert block_shape(1024) == (1024, 1)
    with pytest.raises(ValueError):
        block_shape(1000)


def test_a_hold_that_ran_as_launched_has_no_findings():
    assert hold_findings(rows(), 7, HOLD_NS) is None


def test_a_block_left_from_an_earlier_call_is_named():
    record = rows()
    record[3][3] = 6
    assert hold_findings(record, 7, HOLD_NS) == "1 of 8 hold blocks did not run for this call"


def test_blocks_that_waited_for_an_sm_are_named():
    late = rows(spread_ns=int((START_SPREAD_LIMIT_US + 5) * 1000) * 8 // 7)
    finding = hold_findings(late, 7, HOLD_NS)
    assert finding is not None and "started" in finding and "not free" in finding
    assert hold_findings(rows(spread_ns=int(START_SPREAD_LIMIT_US * 1000) // 2), 7, HOLD_NS) is None


def test_a_hold_cut_short_is_named():
    finding = hold_findings(rows(spin_ns=HOLD_NS - 1), 7, HOLD_NS)
    assert finding == "8 of 8 hold blocks spun less than 200 us"


def test_a_hold_finding_flags_the_timer():
    assert flags_for(["timer:hold blocks started 40.0 us apart"]) == ["timer_patched"]


@pytest.mark.gpu
def test_hold_keeps_a_side_stream_kernel_out_until_it_ends():
    """On the GPU: the hold builds, every SM takes its share of blocks, and a one-warp kernel launched
    on a side stream (default and highest priority) while it spins starts only as it ends."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    import triton
    import triton.language as tl
    from triton.language.extra.cuda import globaltimer

    from harness.judge.worker.hold import Hold

    @triton.jit
    def stamp(out):
        tl.store(out, globaltimer())

    hold = Hold(torch)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert hold.blocks == sms * (2048 // hold.threads) or hold.blocks == sms * (1536 // hold.threads)
    out = torch.zeros(1, dtype=torch.int64, device="cuda")
    for priority in (0, -1):
        side = torch.cuda.Stream(priority=priority)
        with torch.cuda.stream(side):
            stamp[(1,)](out, num_warps=1)
        torch.cuda.synchronize()
        for _ in range(10):
            hold.launch()
            with torch.cuda.stream(side):
                stamp[(1,)](out, num_warps=1)
            torch.cuda.synchronize()
            assert hold.findings() is None
            blocks = hold.rows()
            assert len({block[0] for block in blocks}) == sms, "every SM holds blocks of the hold"
            last_end = max(block[2] for block in blocks)
            # Blocks end within a microsecond of each other; the stamp may start as the first ones end.
            assert out.item() >= last_end - 2_000, f"side kernel ran {(last_end - out.item()) / 1000:.1f} us inside the hold"


def test_the_hold_is_on_by_default_off_by_one_switch_and_named_in_the_timer(monkeypatch, tmp_path):
    """On by default; CRUCIBLE_CUDA_HOLD=0 in the judge's environment turns it off. The judge hands
    its choice to CUDA workers alone, and the run header's timer names it, so a run file of the other
    timer refuses --resume."""
    from harness.judge.workers import WorkerSession
    from harness.executors.runner import CUDA_TIMER, HOLD_TIMER, cuda_timer
    from harness.judge.worker.hold import SWITCH, requested
    from harness.judge.worker.main import _build_hold

    assert requested({}) and requested({SWITCH: "1"}) and not requested({SWITCH: "0"})
    assert cuda_timer({SWITCH: "0"}) == CUDA_TIMER == "cuda_events+device_sync-round_trip_floor,host_floor"
    assert cuda_timer({}) == HOLD_TIMER == "sm_hold+" + CUDA_TIMER

    def environment(device):
        session = object.__new__(WorkerSession)
        session.device, session.gpu_index, session.workdir = device, None, tmp_path
        session.limits = type("Limits", (), {"memory_bytes": 1 << 30})()
        return session._environment(str(tmp_path))

    monkeypatch.delenv(SWITCH, raising=False)
    assert environment("cuda")[SWITCH] == "1"
    monkeypatch.setenv(SWITCH, "0")
    assert environment("cuda")[SWITCH] == "0"
    assert SWITCH not in environment("cpu")
    # A worker told not to build one (or not on CUDA) builds none and reports no error.
    assert _build_hold(None, None) == (None, None)
    monkeypatch.delenv(SWITCH)
    monkeypatch.setenv("CRUCIBLE_DEVICE", "cpu")
    assert _build_hold(None, None) == (None, None)


@pytest.mark.gpu
def test_with_the_hold_on_a_launch_hook_cheat_is_flagged_and_an_honest_matmul_is_not(monkeypatch):
    """In the harness on the GPU, hold on: the corpus's honest matmul times with the hold and no
    timer finding; the same matmul with work started from Triton's launch hook is `timer_patched`."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    from harness.judge.evaluate import EvalCache, evaluate
    from harness.exploits_cli import CORPUS, case_options, find_problem
    from harness.judge.worker.hold import SWITCH

    monkeypatch.setenv(SWITCH, "1")   # spares are keyed by their environment: none without it is adopted
    problem = find_problem("2_Matmul")
    opts = case_options({"timing": True}, "cuda")
    cache = EvalCache()
    honest = evaluate(problem, (CORPUS / "00_control_matmul.py").read_text(), opts, cache)
    assert honest["status"] == "ok" and honest["hold"]["blocks"] > 0, honest
    assert "timer_patched" not in honest["flags"], honest
    cheat = evaluate(problem, (CORPUS / "15_side_stream_launch_hook_gpu.py").read_text(), opts, cache)
    assert "timer_patched" in cheat["flags"], {k: cheat.get(k) for k in ("status", "flags", "remarks", "reason")}


@pytest.mark.gpu
@pytest.mark.parametrize("hold_on", [False, True], ids=["flush_only", "hold"])
def test_an_answer_computed_on_the_host_before_the_window_opens_gains_nothing(monkeypatch, hold_on):
    """On the GPU: a candidate that computes a small matmul on the CPU while the flush (or the hold)
    keeps the GPU from the start event, its copies on a side stream, is timed no faster than
    torch.matmul on the same problem: the call's host time is a floor on its time."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    from harness.judge.evaluate import EvalCache, evaluate
    from harness.exploits_cli import CORPUS, case_options, find_problem
    from harness.judge.worker.hold import SWITCH

    monkeypatch.setenv(SWITCH, "1" if hold_on else "0")
    problem = find_problem("7_Small_Matmul")
    opts = case_options({"timing": True}, "cuda")
    cache = EvalCache()
    honest = evaluate(problem, (CORPUS / "00_control_small_matmul_gpu.py").read_text(), opts, cache)
    cheat = evaluate(problem, (CORPUS / "15_side_stream_host_compute_gpu.py").read_text(), opts, cache)
    assert honest["status"] == "ok" and cheat["status"] == "ok", (honest.get("reason"), cheat.get("reason"))
    assert bool(honest.get("hold")) == hold_on and bool(cheat.get("hold")) == hold_on
    assert cheat["candidate_ms"] >= honest["candidate_ms"], (
        f"host-computed answer timed at {cheat['candidate_ms'] * 1000:.1f} us, "
        f"torch.matmul at {honest['candidate_ms'] * 1000:.1f} us")


def test_a_cuda_window_is_charged_at_least_the_calls_host_time():
    """The CUDA timing path's arithmetic, on the CPU with scripted events and a scripted clock: the
    reported time is the largest of the stream's time, the synchronized window less the round trip's
    floor, and the call's own host time (a call that computes on the host while the GPU is held)."""
    import types

    from harness.judge.worker.handlers import _timed_call

    class ScriptedGuards:
        def __init__(self, clock_ns, stream_ms, window_ms):
            self.clock, self.elapsed = iter(clock_ns), {("start", "returned"): stream_ms, ("start", "end"): window_ms}
            self.names = iter(("start", "returned", "end"))

        def cuda_synchronize(self):
            pass

        def event_class(self, enable_timing):
            return next(self.names)

        def event_record(self, event):
            pass

        def event_elapsed(self, first, second):
            return self.elapsed[(first, second)]

        def perf_counter_ns(self):
            return next(self.clock)

    def timed(host_ms, stream_ms, window_ms, floor_ms=0.01):
        guards = ScriptedGuards((0, int(host_ms * 1e6)), stream_ms, window_ms)
        state = types.SimpleNamespace(device="cuda", guards=guards, hold=None, sync_floor_ms=floor_ms,
                                      flush_buffer=types.SimpleNamespace(zero_=lambda: None),
                                      model=lambda *inputs: "output")
        elapsed, output = _timed_call(state, [])
        assert output == "output"
        return elapsed

    assert timed(host_ms=0.02, stream_ms=1.0, window_ms=1.05) == pytest.approx(1.04)   # GPU-bound: the window
    assert timed(host_ms=0.02, stream_ms=1.2, window_ms=1.05) == pytest.approx(1.2)    # the stream's own
    assert timed(host_ms=0.15, stream_ms=0.001, window_ms=0.02) == pytest.approx(0.15)  # computed on the host
