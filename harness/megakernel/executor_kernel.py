"""The persistent megakernel: one Triton program per SM walks its queue of packed task rows.

Per task: wait on each counter with a bounded spin (acquire loads), optionally hold back (the
safety demonstration's delay), run the op, then a CTA barrier so every thread's stores come before
the signal, and a release increment of the task's counter. A spin that reaches its bound, or sees
another program's abort, stops this program: it records where it stopped and raises the shared
abort flag, so a deadlocked schedule ends the launch with a verdict instead of hanging the GPU.
The last program to leave resets the counters, so the next launch (one per token) starts from zero
with no memset.

Imported only when a schedule is launched (``executor.py`` imports it then), so ``import harness`` stays free of Triton. Uses only
language features Triton 3.6 has: ``tl.atomic_add``/``atomic_xchg`` with ``sem``/``scope``,
``tl.debug_barrier``, ``cache_modifier`` on loads, while loops with data-dependent conditions.
"""

from __future__ import annotations

import triton
import triton.language as tl

from harness.megakernel import executor_pack as layout



# Triton reads module globals only as constexprs.
TWO_PI = tl.constexpr(6.283185307179586)
ROW, NUM_FPARAMS = tl.constexpr(layout.ROW), tl.constexpr(layout.NUM_FPARAMS)
C_OP, C_COUNTER, C_NWAITS = tl.constexpr(layout.C_OP), tl.constexpr(layout.C_COUNTER), tl.constexpr(layout.C_NWAITS)
C_NIN, C_DELAY, C_ID = tl.constexpr(layout.C_NIN), tl.constexpr(layout.C_DELAY), tl.constexpr(layout.C_ID)
C_WAIT_COUNTER, C_WAIT_THRESHOLD = tl.constexpr(layout.C_WAIT_COUNTER), tl.constexpr(layout.C_WAIT_THRESHOLD)
C_IN, C_OUT, C_PARAM = tl.constexpr(layout.C_IN), tl.constexpr(layout.C_OUT), tl.constexpr(layout.C_PARAM)
STATUS_FIELDS = tl.constexpr(layout.STATUS_FIELDS)


@triton.jit
def _wait(counters, flag, counter, target, bound, CHECK_EVERY: tl.constexpr):
    seen = tl.atomic_add(counters + counter, 0, sem="acquire", scope="gpu")
    spins = 0
    abort = 0
    while (seen < target) & (spins < bound) & (abort == 0):
        seen = tl.atomic_add(counters + counter, 0, sem="acquire", scope="gpu")
        spins += 1
        if spins % CHECK_EVERY == 0:
            abort = tl.atomic_add(flag, 0, sem="relaxed", scope="gpu")
    return seen

@triton.jit
def _hold(flag, spins):
    # Each step waits for its load's answer (a round trip to L2), so the hold lasts about ``spins``
    # round trips on a GPU; an abort ends it early.
    n = 0
    abort = 0
    while (n < spins) & (abort == 0):
        abort = tl.atomic_add(flag, 0, sem="acquire", scope="gpu")
        n += 1
    return abort


@triton.jit
def _embed(f, i, tok_off, tab_off, out_off, hidden, vocab, BLOCK: tl.constexpr):
    token = tl.load(i + tok_off).to(tl.int64)
    valid = (token >= 0) & (token < vocab)
    safe = tl.where(valid, token, 0)   # an out-of-range token embeds as NaN, never reads outside the table
    for start in range(0, hidden, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        m = idx < hidden
        row = tl.load(f + tab_off + safe * hidden + idx, mask=m, other=0.0)
        tl.store(f + out_off + idx, tl.where(valid, row, float("nan")), mask=m)

@triton.jit
def _rmsnorm(f, x_off, w_off, out_off, hidden, eps, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, hidden, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        x = tl.load(f + x_off + idx, mask=idx < hidden, other=0.0, cache_modifier=".cg")
        acc += x * x
    scale = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / hidden + eps)
    for start in range(0, hidden, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        m = idx < hidden
        x = tl.load(f + x_off + idx, mask=m, other=0.0, cache_modifier=".cg")
        w = tl.load(f + w_off + idx, mask=m, other=0.0)
        tl.store(f + out_off + idx, x * scale * w, mask=m)

@triton.jit
def _gemv(f, x_off, w_off, r_off, out_off, K, width, lo, residual, BN: tl.constexpr, BK: tl.constexpr):
    for n0 in range(0, width, BN):
        rows = n0 + tl.arange(0, BN)
        rmask = rows < width
        acc = tl.zeros([BN, BK], tl.float32)
        for k0 in range(0, K, BK):
            cols = k0 + tl.arange(0, BK)
            kmask = cols < K
            x = tl.load(f + x_off + cols, mask=kmask, other=0.0, cache_modifier=".cg")
            w = tl.load(f + w_off + (lo + rows)[:, None] * K + cols[None, :],
                        mask=rmask[:, None] & kmask[None, :], other=0.0)
            acc += w * x[None, :]
        y = tl.sum(acc, axis=1)
        if residual:
            y += tl.load(f + r_off + lo + rows, mask=rmask, other=0.0, cache_modifier=".cg")
        tl.store(f + out_off + lo + rows, y, mask=rmask)

@triton.jit
def _rope(f, x_off, out_off, d, heads, pos, theta, BLOCK: tl.constexpr):
    half = d // 2
    total = d * heads
    log2_theta = tl.log2(theta)
    for start in range(0, total, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        m = idx < total
        j = idx % d
        first = j < half
        partner = tl.where(first, idx + half, idx - half)
        x = tl.load(f + x_off + idx, mask=m, other=0.0, cache_modifier=".cg")
        xp = tl.load(f + x_off + partner, mask=m, other=0.0, cache_modifier=".cg")
        freq = (j % half).to(tl.float32) * 2.0 / d
        angle = pos * (1.0 / tl.exp2(freq * log2_theta))
        angle = angle - TWO_PI * tl.floor(angle / TWO_PI + 0.5)   # keep cos/sin in [-pi, pi]
        c, s = tl.cos(angle), tl.sin(angle)
        tl.store(f + out_off + idx, tl.where(first, x * c - xp * s, x * c + xp * s), mask=m)

@triton.jit
def _kv_append(f, src_off, cache_off, pos, width, stride, BLOCK: tl.constexpr):
    for start in range(0, width, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        m = idx < width
        v = tl.load(f + src_off + idx, mask=m, other=0.0, cache_modifier=".cg")
        tl.store(f + cache_off + pos * stride + idx, v, mask=m)

@triton.jit
def _attention(f, q_off, k_off, v_off, out_off, d, h0, h1, group, length, stride, scale,
               BD: tl.constexpr, BL: tl.constexpr):
    dims = tl.arange(0, BD)
    dmask = dims < d
    for h in range(h0, h1):
        kv = (h // group) * d
        q = tl.load(f + q_off + h * d + dims, mask=dmask, other=0.0, cache_modifier=".cg")
        best = tl.max(tl.full([BL], float("-inf"), tl.float32), axis=0)
        total = tl.sum(tl.zeros([BL], tl.float32), axis=0)
        acc = tl.zeros([BD], tl.float32)
        for l0 in range(0, length, BL):
            ls = l0 + tl.arange(0, BL)
            lmask = ls < length
            at = ls[:, None] * stride + kv + dims[None, :]
            both = lmask[:, None] & dmask[None, :]
            keys = tl.load(f + k_off + at, mask=both, other=0.0, cache_modifier=".cg")
            score = tl.where(lmask, tl.sum(keys * q[None, :], axis=1) * scale, float("-inf"))
            new_best = tl.maximum(best, tl.max(score, axis=0))
            p = tl.exp(score - new_best)
            alpha = tl.exp(best - new_best)
            values = tl.load(f + v_off + at, mask=both, other=0.0, cache_modifier=".cg")
            total = total * alpha + tl.sum(p, axis=0)
            acc = acc * alpha + tl.sum(p[:, None] * values, axis=0)
            best = new_best
        tl.store(f + out_off + h * d + dims, acc / total, mask=dmask)

@triton.jit
def _silu_mul(f, g_off, u_off, out_off, lo, width, BLOCK: tl.constexpr):
    for start in range(0, width, BLOCK):
        idx = lo + start + tl.arange(0, BLOCK)
        m = idx < lo + width
        g = tl.load(f + g_off + idx, mask=m, other=0.0, cache_modifier=".cg")
        u = tl.load(f + u_off + idx, mask=m, other=0.0, cache_modifier=".cg")
        tl.store(f + out_off + idx, g / (1.0 + tl.exp(-g)) * u, mask=m)

@triton.jit
def _argmax(f, i, x_off, out_off, vocab, BLOCK: tl.constexpr):
    # Each lane keeps its own best across blocks (no reduction inside the loop: the lm head's vocab
    # is 128k wide); strict ">" keeps a lane's first maximum, the final min keeps the first overall,
    # as torch.argmax does.
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    where = tl.zeros([BLOCK], tl.int32)
    for start in range(0, vocab, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        x = tl.load(f + x_off + idx, mask=idx < vocab, other=float("-inf"), cache_modifier=".cg")
        better = x > best
        where = tl.where(better, idx.to(tl.int32), where)
        best = tl.where(better, x, best)
    top = tl.max(best, axis=0)
    tl.store(i + out_off, tl.min(tl.where(best == top, where, 2147483647), axis=0))


@triton.jit
def _add(f, a_off, b_off, out_off, n, BLOCK: tl.constexpr):
    for start in range(0, n, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        m = idx < n
        a = tl.load(f + a_off + idx, mask=m, other=0.0, cache_modifier=".cg")
        b = tl.load(f + b_off + idx, mask=m, other=0.0, cache_modifier=".cg")
        tl.store(f + out_off + idx, a + b, mask=m)

@triton.jit
def _run(f, i, op, n_in, a0, a1, a2, o0, p0, p1, p2, p3, p4, p5, f0, BLOCK: tl.constexpr, BN: tl.constexpr,
         BK: tl.constexpr, BD: tl.constexpr, BL: tl.constexpr):
    if op == 1:
        _embed(f, i, a0, a1, o0, p0, p1, BLOCK)
    elif op == 2:
        _rmsnorm(f, a0, a1, o0, p0, f0, BLOCK)
    elif op == 3:
        _gemv(f, a0, a1, a2, o0, p0, p1, p2, n_in == 3, BN, BK)
    elif op == 4:
        _rope(f, a0, o0, p0, p1, p2, f0, BLOCK)
    elif op == 5:
        _kv_append(f, a0, o0, p0, p1, p2, BLOCK)
    elif op == 6:
        _attention(f, a0, a1, a2, o0, p0, p1, p2, p3, p4, p5, f0, BD, BL)
    elif op == 7:
        _silu_mul(f, a0, a1, o0, p0, p1, BLOCK)
    elif op == 8:
        _argmax(f, i, a0, o0, p0, BLOCK)
    elif op == 9:
        _add(f, a0, a1, o0, p0, BLOCK)


# Integer arguments are not specialised: a schedule with another number of counters must not cost
# a compile of this large kernel.
@triton.jit(do_not_specialize=["n_counters", "bound"])
def megakernel(f, i, rows, fparams, queue_start, counters, n_counters, flag, status, bound,
               BLOCK: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, BD: tl.constexpr,
               BL: tl.constexpr, CHECK_EVERY: tl.constexpr):
    pid = tl.program_id(0)
    r = tl.load(queue_start + pid)
    end = tl.load(queue_start + pid + 1)
    ok = 1
    stuck, stuck_counter, stuck_seen = -1, -1, -1
    while (r < end) & (ok == 1):
        # Every field the task needs, loaded up front: independent loads, one round trip together,
        # in flight while the waits spin.
        base = rows + r * ROW
        op, n_in, n_waits = tl.load(base + C_OP), tl.load(base + C_NIN), tl.load(base + C_NWAITS)
        out_counter, delay, task_id = tl.load(base + C_COUNTER), tl.load(base + C_DELAY), tl.load(base + C_ID)
        a0, a1, a2 = tl.load(base + C_IN), tl.load(base + C_IN + 1), tl.load(base + C_IN + 2)
        o0 = tl.load(base + C_OUT)
        p0, p1, p2 = tl.load(base + C_PARAM), tl.load(base + C_PARAM + 1), tl.load(base + C_PARAM + 2)
        p3, p4, p5 = tl.load(base + C_PARAM + 3), tl.load(base + C_PARAM + 4), tl.load(base + C_PARAM + 5)
        f0 = tl.load(fparams + r * NUM_FPARAMS)
        w = 0
        while (w < n_waits) & (ok == 1):
            counter = tl.load(base + C_WAIT_COUNTER + w)
            target = tl.load(base + C_WAIT_THRESHOLD + w)
            seen = _wait(counters, flag, counter, target, bound, CHECK_EVERY)
            if seen < target:
                ok = 0
                stuck = task_id.to(tl.int32)
                stuck_counter = counter.to(tl.int32)
                stuck_seen = seen
            w += 1
        tl.debug_barrier()   # the waits' acquire (one thread) comes before every thread's reads
        if ok == 1:
            if delay > 0:
                _hold(flag, delay)
            _run(f, i, op, n_in, a0, a1, a2, o0, p0, p1, p2, p3, p4, p5, f0, BLOCK, BN, BK, BD, BL)
            tl.debug_barrier()   # every thread's writes happen before the one signalling thread's release
            tl.atomic_add(counters + out_counter, 1, sem="release", scope="gpu")
            r += 1
    if ok == 0:
        tl.atomic_xchg(flag, 1, sem="relaxed", scope="gpu")
    row = status + pid * STATUS_FIELDS
    tl.store(row, r - tl.load(queue_start + pid))
    tl.store(row + 1, stuck)
    tl.store(row + 2, stuck_counter)
    tl.store(row + 3, stuck_seen)
    # Leaving: the last program out resets the counters for the next launch.
    left = tl.atomic_add(counters + n_counters, 1, sem="acq_rel", scope="gpu")
    if left == tl.num_programs(0) - 1:
        for start in range(0, n_counters + 1, BLOCK):
            idx = start + tl.arange(0, BLOCK)
            tl.store(counters + idx, tl.zeros([BLOCK], tl.int32), mask=idx <= n_counters)

