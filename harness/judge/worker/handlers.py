"""The worker's operations, one function per message the judge can send.

Every helper a handler calls after the candidate exists is bound as a default argument when this
module is imported (before the candidate is): rebinding ``handlers._timed_call`` or
``harness.judge.checks.flatten_outputs`` from candidate code changes nothing the worker does (the
guards flag the attempt), and replacing a function's defaults or code is refused by the audit
hook. ``HANDLERS`` is a read-only mapping for the same reason.
"""

from __future__ import annotations

import os
from types import MappingProxyType
from typing import Any

import torch

POISON_BYTES_MIN = 1 << 20


class _OutputTypeError(TypeError):
    pass


def _flatten(output, _tensor=torch.Tensor, _type=type, _isinstance=isinstance, _sequence=(tuple, list)) -> list | None:
    """harness.judge.checks.flatten_outputs with its builtins bound here: exactly plain tensors, in
    (nested) tuples or lists, depth first; None for anything else (a subclass can work lazily)."""
    flat, pending = [], [output]
    while pending:
        item = pending.pop()
        if _type(item) is _tensor:
            flat.append(item)
        elif _isinstance(item, _sequence):
            pending.extend(reversed(item))
        else:
            return None
    return flat


def _plain_outputs(torch, output, inputs=(), _flatten=_flatten, _error=_OutputTypeError, _tensor=torch.Tensor,
                   _type=type) -> list:
    """The outputs as a flat list of detached plain tensors, none of them sharing memory with an input.

    An output that is an input (or a view of one) would travel back to the judge as the judge's own
    memory; the judge's input-mutation check catches one that was changed, this catches it first
    and by name, on both devices (on CUDA, re-sending a tensor received by IPC fails in the reply).
    """
    flat = _flatten(output)
    if flat is None:
        raise _error(f"forward returned {type(output).__module__}.{type(output).__name__}; "
                     "it must return a plain torch.Tensor (or a tuple of them)")
    shared = {t.untyped_storage().data_ptr(): i for i, t in enumerate(inputs) if _type(t) is _tensor}
    for position, tensor in enumerate(flat):
        where = shared.get(tensor.untyped_storage().data_ptr())
        if where is not None and tensor.numel():
            raise _error(f"output_aliases_input: output {position} shares memory with input {where} "
                         "(returned in place or as a view); return a new tensor")
    return [t.detach() for t in flat]


def torch_float64(tensor, _complex=torch.complex128, _real=torch.float64):
    return _complex if tensor.is_complex() else _real


FINGERPRINT_CHUNK = 1 << 24  # elements summed at a time


def fingerprint(tensor, _dtype=torch_float64, _float=float, _chunk=FINGERPRINT_CHUNK) -> float:
    """A cheap content summary, compared by the judge with its own on the received output.

    Summed in float64, a chunk at a time: ``sum(dtype=float64)`` casts a float32 input to float64
    first on CUDA, which for a 6 GiB output is a 12 GiB allocation (seen on an H200). NaN and Inf
    make the sum non-finite, which the judge compares by identity rather than by distance. Only
    Tensor methods are used (the class is frozen in the worker), so candidate code cannot patch them.
    """
    view = tensor.detach()
    if view.dim() == 0 or view.numel() <= _chunk:
        return _float(view.sum(dtype=_dtype(view)))
    parts = view.reshape(-1) if view.is_contiguous() else view
    step = max(1, _chunk // max(1, view.numel() // parts.shape[0]))
    total = 0.0
    for part in parts.split(step):
        total += _float(part.sum(dtype=_dtype(view)))
    return total


def _load_matching_weights(torch, model, reference_state: dict) -> int:
    own = model.state_dict()
    matching = {k: v for k, v in reference_state.items() if k in own and tuple(own[k].shape) == tuple(v.shape)}
    if matching:
        with torch.no_grad():
            model.load_state_dict(matching, strict=False)
    return len(matching)


def _poison(state, nbytes: int) -> None:
    """Leave NaNs in memory the allocator will hand out next, so unwritten outputs never look right."""
    torch = state.torch
    if state.device == "cuda":
        block = torch.empty(max(nbytes, POISON_BYTES_MIN) // 4, dtype=torch.float32, device="cuda")
        block.fill_(float("nan"))
        del block


def _sync(state) -> None:
    if state.device == "cuda":
        state.guards.cuda_synchronize()


def _before_window(state) -> None:
    """What every CUDA window is preceded by, timed calls and the round-trip floor's empty windows
    alike: synchronize, flush the L2, and the hold where there is one."""
    guards = state.guards
    guards.cuda_synchronize()
    state.flush_buffer.zero_()
    if state.hold is not None:
        # The hold fills every SM from an idle GPU (so the synchronize) until the start event: the
        # host launches the call meanwhile, and nothing on another stream can run before the
        # window opens (harness.judge.worker.hold). Without it the flush alone keeps the GPU busy.
        guards.cuda_synchronize()
        state.hold.launch()


def _timed_call(state, inputs: list, _before_window=_before_window) -> tuple[float, Any]:
    guards = state.guards
    if state.device == "cuda":
        hold = state.hold
        _before_window(state)
        start, returned, end = (guards.event_class(enable_timing=True) for _ in range(3))
        guards.event_record(start)
        begin = guards.perf_counter_ns()
        output = state.model(*inputs)
        host_ms = (guards.perf_counter_ns() - begin) / 1e6
        guards.event_record(returned)
        # The device-wide synchronize makes work the call left on other streams count; the end event
        # after it also carries the synchronize's own round trip, of which the least ever seen (the
        # floor, measured at load before the candidate existed) is taken out again. Every call's round
        # trip is at least about the floor, so the window still ends no earlier than the last stream's
        # work, and never earlier than the current stream's (docs/HARNESS.md, "Why the CUDA window looks as it does").
        guards.cuda_synchronize()
        guards.event_record(end)
        guards.cuda_synchronize()
        if hold is not None:
            problem = hold.findings()
            if problem and not guards.timer_findings:  # the first is enough to flag the record
                guards.timer_findings.append(f"timer:{problem}")
        on_stream = guards.event_elapsed(start, returned)
        # The call's own host time is a floor too: the window opens only when the GPU reaches the start
        # event, after the flush (and the hold), so host work done before then, such as computing the
        # answer on the CPU with copies on a side stream's copy engine, which SMs held by the flush or
        # the hold do not stop, would otherwise go unmeasured. Honest GPU-bound calls return long
        # before their window closes; a launch-bound call is charged its launches, as do_bench's
        # back-to-back loop is.
        return max(on_stream, guards.event_elapsed(start, end) - state.sync_floor_ms, host_ms), output
    begin = guards.perf_counter_ns()
    output = state.model(*inputs)
    return (guards.perf_counter_ns() - begin) / 1e6, output


SYNC_FLOOR_WINDOWS = 25


def _sync_round_trip_floor(state, windows: int = SYNC_FLOOR_WINDOWS) -> float:
    """The least round trip (ms) of the timed window's closing synchronize, over windows with no call:
    flush (and hold), start, an event, synchronize, an event. Measured before the candidate is
    imported, so nothing the candidate does can lower it."""
    guards = state.guards
    trips = []
    for _ in range(windows):
        _before_window(state)
        start, returned, end = (guards.event_class(enable_timing=True) for _ in range(3))
        guards.event_record(start)
        guards.event_record(returned)
        guards.cuda_synchronize()
        guards.event_record(end)
        guards.cuda_synchronize()
        trips.append(guards.event_elapsed(returned, end))
    return min(trips)


def load(state, message: dict, _load_weights=_load_matching_weights) -> dict:
    """Import the candidate (guards armed first), build ModelNew under the judge's seed, copy weights."""
    torch = state.torch
    from harness.judge.precision import apply_backend_flags, torch_dtype

    apply_backend_flags(message["flags"])
    state.device = message["device"]
    if state.device == "cuda":
        torch.cuda.set_device(message.get("gpu_index") or 0)
        l2 = torch.cuda.get_device_properties(0).L2_cache_size or (50 << 20)
        state.flush_buffer = torch.empty(2 * l2 // 4 + 1, dtype=torch.int32, device="cuda")  # CUDA is up before the sandbox
        state.sync_floor_ms = _sync_round_trip_floor(state)
    # The judge's word that this is the harness's own code (a baseline, or the reference or inductor
    # generator): its torch.compile may use inductor's compile subprocesses (Guards.protect).
    state.guards.protect(os.getcwd(), compile_pool=message.get("trusted") is True and state.device == "cuda",
                         state_class=type(state))
    module = state.import_candidate(message["source"])
    if not hasattr(module, "ModelNew"):
        raise ImportError("the candidate defines no ModelNew class")
    torch.manual_seed(message["init_seed"])
    with torch.device(state.device):
        model = module.ModelNew(*message["init_args"])
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"ModelNew(...) built a {type(model).__name__}, not a torch.nn.Module")
    model = model.to(device=state.device, dtype=torch_dtype(message["precision"]))
    loaded = _load_weights(torch, model, message["state_dict"])
    state.model = model
    return {"ok": True, "weights_loaded": loaded, "weights_total": len(message["state_dict"]),
            "sandbox": state.guards.sandbox, "sync_floor_ms": state.sync_floor_ms,
            "hold": state.hold.describe() if state.hold is not None else None, "hold_error": state.hold_error}


def call(state, message: dict, _poison=_poison, _plain=_plain_outputs, _sync=_sync) -> dict:
    """One correctness call on inputs the judge generated; memory poisoned first. Reports the Triton
    launches of this call alone, so a kernel launched only at import or in __init__ does not count."""
    torch = state.torch
    guards = state.guards
    _poison(state, message.get("poison_bytes", POISON_BYTES_MIN))
    launches = guards.triton_launches
    with torch.no_grad():
        output = state.model(*message["inputs"])
    launches = guards.triton_launches - launches
    guards.scan_threads()
    flat = _plain(torch, output, message["inputs"])
    _sync(state)
    return {"ok": True, "outputs": flat, "triton_launches": launches}


def set_timing_inputs(state, message: dict) -> dict:
    state.timing_sets = message["sets"]
    state.readback = message.get("readback") or []   # the judge's buffers for checked outputs
    if state.device == "cuda":
        # The correctness phase's cached blocks (poison, outputs) go back to the driver: the timed
        # calls allocate their own, and full-size problems need the room.
        state.torch.cuda.empty_cache()
    return {"ok": True, "count": len(state.timing_sets)}


def time_calls(state, message: dict, _timed=_timed_call, _plain=_plain_outputs, _fingerprint=fingerprint,
               _ipc_collect=torch.cuda.ipc_collect) -> dict:
    """Time one call per index, each on its own input set; L2 flushed before each on CUDA.

    The timed window closes only after a device-wide synchronize, so work on side streams counts.
    Each output is fingerprinted at return and copied, outside the window, into the judge's readback
    slot for its place in the batch (kept as it is where it does not fit one), then let go of: the
    next call reuses its block, so no call allocates a new output block inside its window because
    earlier outputs of the batch are still alive. Threads running candidate code are looked for
    right after each call.
    """
    torch = state.torch
    times, fingerprints, state.retained, allocs = [], [], [], []
    readback = getattr(state, "readback", [])
    on_gpu = state.device == "cuda"
    if on_gpu:
        # Outputs sent to the judge last batch wait in PyTorch's IPC limbo until collected; collected
        # here, outside any window, so their blocks can serve this batch's outputs. (On the H200 the
        # counts of in-window cudaMallocs were the same with and without it: docs/HARNESS.md.)
        _ipc_collect()  # bound at import: a candidate's patch of torch.cuda cannot run here
    with torch.no_grad():
        for position, index in enumerate(message["indices"]):
            before = allocator_counts(torch) if on_gpu else None
            elapsed, output = _timed(state, state.timing_sets[index])
            after = allocator_counts(torch) if on_gpu else None
            state.guards.scan_threads()
            flat = _plain(torch, output, state.timing_sets[index])
            times.append(elapsed)
            fingerprints.append([_fingerprint(t) for t in flat])
            state.retained.append(keep_output(readback, position, flat))
            # Names still bound during the next call would keep this output's block in use.
            output = flat = None
            if before is not None and after is not None:
                allocs.append([a - b for a, b in zip(after, before)])
    reply = {"ok": True, "times_ms": times, "fingerprints": fingerprints}
    if allocs:
        reply["device_allocs"], reply["device_frees"], reply["alloc_retries"] = (list(c) for c in zip(*allocs))
    return reply


def keep_output(readback: list, position: int, flat: list) -> list | None:
    """Copy a timed output into the readback slot for its place in the batch (None: copied), or keep
    it as it is where it does not fit the slot (another shape, dtype, device or count)."""
    target = readback[position] if position < len(readback) else None
    if not _fits(flat, target):
        return flat
    for destination, source in zip(target, flat):
        destination.copy_(source)
    return None


def allocator_counts(torch) -> tuple[int, int, int]:
    """The caching allocator's counts so far: cudaMalloc calls, cudaFree calls, out-of-memory retries.

    A call that needs a new segment pays for cudaMalloc inside its timed window, which a loop that
    reuses cached blocks (triton's do_bench) never does; the judge reports how often it happened.
    A retry means a cudaMalloc failed and the allocator freed its cached blocks to try again, so the
    device was full, not the cache cold. (-1 where this build's statistics lack a count.)
    """
    stats = torch.cuda.memory_stats()

    def count(*names):
        value = next((stats[n] for n in names if n in stats), -1)
        return value if type(value) is int else -1

    return (count("num_device_alloc", "segment.all.allocated"), count("num_device_free", "segment.all.freed"),
            count("num_alloc_retries"))


def outputs(state, message: dict, _sync=_sync) -> dict:
    """The checked timed outputs: None for one already in its readback slot, else the tensors kept.
    Every kept output is let go of here.

    The slots keep the worker's own blocks out of CUDA IPC, so they go back to its caching allocator
    as soon as they are let go of, not when the judge's side also has.
    """
    kept, state.retained = state.retained, []
    entries = [kept[position] for position in message["positions"]]
    _sync(state)  # the copies into the slots are done before the judge reads them
    return {"ok": True, "outputs": entries}


def _fits(flat: list, target: list | None) -> bool:
    return (target is not None and len(flat) == len(target)
            and all(s.shape == d.shape and s.dtype == d.dtype and s.device == d.device for s, d in zip(flat, target)))


def profile(state, message: dict, _sync=_sync) -> dict:
    """Per-kernel times of a few calls from torch's profiler, for feedback to generators."""
    torch = state.torch
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if state.device == "cuda" else [])
    calls = message.get("calls", 3)
    with torch.no_grad(), torch_profile(activities=activities) as prof:
        for _ in range(calls):
            state.model(*message["inputs"])
            _sync(state)
    return {"ok": True, "profile": _top_kernels(prof, state.device == "cuda", calls)}


def _top_kernels(prof, on_gpu: bool, calls: int, limit: int = 12) -> list[dict]:
    rows = []
    for event in prof.key_averages():
        device_us = getattr(event, "self_device_time_total", None)
        if device_us is None:
            device_us = getattr(event, "self_cuda_time_total", 0)
        time_us = device_us if on_gpu else event.self_cpu_time_total
        if time_us > 0 and (not on_gpu or device_us > 0):
            rows.append({"name": event.key[:120], "time_us": time_us / calls, "calls": event.count // calls or 1})
    rows.sort(key=lambda row: -row["time_us"])
    return rows[:limit]


def _answering(handler):
    """Echo the judge's nonce: a message the candidate forged on the channel cannot carry it."""
    def answer(state, message: dict, _handler=handler) -> dict:
        reply = _handler(state, message)
        if "nonce" in message:
            reply["nonce"] = message["nonce"]
        return reply

    return answer


HANDLERS = MappingProxyType({op: _answering(fn) for op, fn in {
    "load": load,
    "call": call,
    "set_timing_inputs": set_timing_inputs,
    "time": time_calls,
    "outputs": outputs,
    "profile": profile,
}.items()})
