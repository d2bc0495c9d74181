"""The hold: a kernel that fills every SM for a fixed time right before each timed CUDA window opens.

Why (docs/HARNESS.md, "Why the CUDA window looks as it does"): the worker synchronizes before every timed call, so without
anything queued the window opens on an idle GPU and is charged the host's launch of the call's first
kernel, which triton's do_bench, launching back to back, never pays. A spin queued before the start
event lets the host launch the call while the GPU is still busy, but a spin that leaves SMs free
lets work a candidate starts on a side stream run there, unmeasured.

The hold is launched on an idle GPU (a synchronize comes first), and its blocks take every thread
slot of every SM: two blocks of 1,024 threads where an SM holds 2,048 threads, three of 512 where it
holds 1,536. All of them are resident before the host can launch anything else, so a kernel on any
other stream finds no room until the hold's blocks end, at the moment the start event is recorded.
Each block spins on %globaltimer for the hold's time and records its SM, start, end and the call's
sequence number; the worker reads them after the window and reports a hold that did not run as
launched (blocks missing, started late because something else had the SMs, or cut short).

Measured on an H100, outside the harness: 12 registers a thread, 264 blocks on
132 of 132 SMs, block starts within 0.64 us; a one-warp kernel launched on a side stream, of default
or highest priority, during a 200 us hold started within 0.06 us of the hold's last block's end.
"""

from __future__ import annotations

# On unless the judge's environment sets it to 0 (the judge hands its value to each CUDA worker). On
# by default because its runs in the harness on an H100 showed no cost: its GPU tests passed, the
# starter set was within 3.6% of do_bench with no record flagged, the GPU exploit corpus passed.
SWITCH = "CRUCIBLE_CUDA_HOLD"
HOLD_US = 200.0                  # longer than the host needs to launch a call's first kernel
START_SPREAD_LIMIT_US = 10.0     # measured spread 0.64 us; a block that starts later found an SM taken
RECORD_FIELDS = 4                # SM, start ns, end ns, sequence number


def requested(environ) -> bool:
    return environ.get(SWITCH, "1") != "0"


def block_shape(max_threads_per_sm: int) -> tuple[int, int]:
    """(threads a block, blocks an SM) that together take every thread slot of an SM."""
    for threads in (1024, 512, 256):
        if max_threads_per_sm % threads == 0:
            return threads, max_threads_per_sm // threads
    raise ValueError(f"no block size divides {max_threads_per_sm} threads an SM")


def hold_findings(rows, sequence: int, hold_ns: int, spread_limit_us: float = START_SPREAD_LIMIT_US) -> str | None:
    """What is wrong with one hold, from its blocks' records (SM, start, end, sequence); None if nothing.

    A block that did not write this call's sequence number did not run; starts spread wider than the
    limit mean some block waited for an SM that other work had; a block that spun less than the hold's
    time was cut short. Either way the window may have opened after unmeasured work ran."""
    stale = sum(1 for row in rows if row[3] != sequence)
    if stale:
        return f"{stale} of {len(rows)} hold blocks did not run for this call"
    starts = [row[1] for row in rows]
    spread_us = (max(starts) - min(starts)) / 1000
    if spread_us > spread_limit_us:
        return f"hold blocks started {spread_us:.1f} us apart (limit {spread_limit_us:g} us): the SMs were not free"
    short = sum(1 for row in rows if row[2] - row[1] < hold_ns)
    if short:
        return f"{short} of {len(rows)} hold blocks spun less than {hold_ns / 1000:g} us"
    return None


def _kernel():
    import triton
    import triton.language as tl
    from triton.language.extra.cuda import globaltimer, smid

    @triton.jit(do_not_specialize=["nanoseconds", "sequence"])
    def crucible_hold(record, nanoseconds, sequence):
        start = globaltimer()
        now = start
        while now - start < nanoseconds:
            now = globaltimer()
        row = record + 4 * tl.program_id(0)  # RECORD_FIELDS a block
        tl.store(row, smid().to(tl.int64))
        tl.store(row + 1, start)
        tl.store(row + 2, now)
        tl.store(row + 3, sequence.to(tl.int64))

    return crucible_hold


class Hold:
    """Built by the worker before the candidate exists (the kernel compiled, its launcher kept)."""

    def __init__(self, torch, microseconds: float = HOLD_US):
        properties = torch.cuda.get_device_properties(torch.cuda.current_device())
        max_threads = getattr(properties, "max_threads_per_multi_processor", 2048)
        registers = getattr(properties, "regs_per_multiprocessor", 65536)
        self.threads, per_sm = block_shape(max_threads)
        self.blocks = properties.multi_processor_count * per_sm
        self.ns = int(microseconds * 1000)
        self.sequence = 1
        self.record = torch.zeros(RECORD_FIELDS * self.blocks, dtype=torch.int64, device="cuda")
        kernel = _kernel()
        torch.cuda.synchronize()  # the first hold, like every later one, starts on an idle GPU
        compiled = kernel[(self.blocks,)](self.record, self.ns, self.sequence, num_warps=self.threads // 32)
        torch.cuda.synchronize()
        n_regs = getattr(compiled, "n_regs", None)
        if n_regs and n_regs * max_threads > registers:
            raise RuntimeError(f"the hold needs {n_regs} registers a thread: {max_threads} threads do not fit an SM")
        self.registers = n_regs
        problem = self.findings()
        if problem:
            raise RuntimeError(f"the hold did not hold on an idle GPU: {problem}")
        # The compiled kernel's own launcher: not JITFunction.run, which the guards count as the
        # candidate's Triton launches.
        self._launch = compiled[(self.blocks, 1, 1)]

    def launch(self) -> None:
        self.sequence += 1
        self._launch(self.record, self.ns, self.sequence)

    def rows(self) -> list:
        """(SM, start ns, end ns, sequence) of each of the last hold's blocks (after a synchronize)."""
        return self.record.view(-1, RECORD_FIELDS).cpu().tolist()

    def findings(self) -> str | None:
        """Checks the last hold (call after the window's closing synchronize)."""
        return hold_findings(self.rows(), self.sequence, self.ns)

    def describe(self) -> dict:
        return {"us": self.ns / 1000, "blocks": self.blocks, "threads": self.threads, "registers": self.registers}
