"""Lowering: a Llama decoder config + a schedule config -> the task DAG of one decode step.

Stages (per layer): attention RMSNorm; q/k/v GEMV tiles; RoPE on q and on k; K and V appends to
the caches (one shared counter); attention tiles over head groups; o-projection tiles that add the
residual; MLP RMSNorm; gate and up tiles; SiLU-mul tiles; down tiles that add the residual. Then the
final norm, lm-head tiles and a greedy argmax. Every stage has one counter; a task waits, with a full
threshold, on the counters of the stages that wrote its inputs. Tasks are emitted in a topological
order and each SM's queue keeps that order, so a lowering is deadlock-free by construction; the
validator and the oracle check it anyway.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.errors import UserError
from harness.megakernel.builder import ScheduleBuilder
from harness.megakernel.configs import ModelConfig, ScheduleConfig, toy_target

LOWERING_VERSION = "1"


def tiles(total: int, width: int) -> list[tuple[int, int]]:
    """[start, stop) column ranges of width ``width`` (0 = one tile); the last may be narrower."""
    width = total if width <= 0 else min(width, total)
    return [(start, min(start + width, total)) for start in range(0, total, width)]


@dataclass
class _Stage:
    counter: int
    tasks: list[int] = field(default_factory=list)
    parents: set[int] = field(default_factory=set)  # stage indices it waits on


class _Lowering:
    def __init__(self, model: ModelConfig, sched: ScheduleConfig, pos: int, target: dict):
        self.m, self.s, self.pos = model, sched, pos
        meta = {"model": model.to_dict(), "schedule": sched.to_dict(), "position": pos,
                "lowering": LOWERING_VERSION, "label": f"{model.name()}/{sched.name()}/pos{pos}"}
        self.b = ScheduleBuilder(target, meta)
        self.b.doc["config"] = sched.to_dict()
        self.stages: list[_Stage] = []
        self.writer_stage: dict[int, int] = {}     # buffer -> stage that wrote it this step
        self.sm_load = [0.0] * sched.num_sms
        self.emitted = 0

    # ------------------------------------------------------------------ helpers

    def weight(self, name: str, shape: list[int]) -> int:
        return self.b.buffer(name, "WEIGHT", shape, source=name)

    def act(self, name: str, width: int) -> int:
        return self.b.buffer(name, "ACTIVATION", [1, width], space="GLOBAL_SCRATCH")

    def stage(self, op: str, jobs: list[dict], label: str) -> int:
        """Emit one stage: every job is a task (inputs, outputs, params, regions, cost)."""
        index = len(self.stages)
        stage = _Stage(self.b.counter(label))
        waits = self._waits_for(jobs, stage)
        for j, job in enumerate(jobs):
            sm = self._place(job, j)
            stage.tasks.append(self.b.task(op, job["inputs"], job["outputs"], stage.counter, waits, sm,
                                           job.get("params"), job.get("regions"),
                                           f"{label}[{j}]" if len(jobs) > 1 else label,
                                           job.get("bytes", 0), job.get("flops", 0)))
        for job in jobs:
            for out in job["outputs"]:
                self.writer_stage[out] = index
        self.stages.append(stage)
        return index

    def _waits_for(self, jobs: list[dict], stage: _Stage) -> list[tuple[int, int]]:
        parents = sorted({self.writer_stage[b] for job in jobs for b in job["inputs"] if b in self.writer_stage})
        stage.parents = set(parents)
        return [(self.stages[p].counter, len(self.stages[p].tasks)) for p in parents]

    def _place(self, job: dict, j: int) -> int:
        policy, n = self.s.sm_policy, self.s.num_sms
        self.emitted += 1
        if policy == "round_robin":
            return (self.emitted - 1) % n
        if policy == "spread":
            return j % n
        sm = min(range(n), key=lambda k: (self.sm_load[k], k))
        self.sm_load[sm] += job.get("bytes", 0) + 1
        return sm

    # ------------------------------------------------------------------ ops

    def gemv(self, x: int, w_name: str, n_out: int, k_in: int, out: int, label: str,
             width: int, residual: int | None = None) -> int:
        w = self.weight(w_name, [n_out, k_in])
        jobs = []
        for lo, hi in tiles(n_out, width):
            inputs = [x, w] + ([residual] if residual is not None else [])
            jobs.append({"inputs": inputs, "outputs": [out],
                         "params": {"K": k_in, "N_tile": hi - lo, "n_off": lo},
                         "regions": {out: [[0, 1], [lo, hi]]},
                         "bytes": 4 * ((hi - lo) * k_in + k_in + 2 * (hi - lo)), "flops": 2 * (hi - lo) * k_in})
        return self.stage("GEMV_TILE", jobs, label)

    def rmsnorm(self, x: int, w_name: str, out: int, label: str) -> int:
        h = self.m.hidden
        w = self.weight(w_name, [h])
        return self.stage("RMSNORM", [{"inputs": [x, w], "outputs": [out], "bytes": 12 * h, "flops": 4 * h,
                                       "params": {"eps": self.m.rms_eps, "hidden": h}}], label)

    def rope(self, x: int, heads: int, out: int, label: str) -> int:
        m = self.m
        return self.stage("ROPE", [{"inputs": [x], "outputs": [out], "bytes": 8 * heads * m.head_dim,
                                    "flops": 6 * heads * m.head_dim,
                                    "params": {"head_dim": m.head_dim, "n_heads": heads,
                                               "theta": m.rope_theta, "pos": self.pos}}], label)

    def appends(self, k: int, v: int, k_cache: int, v_cache: int, label: str) -> int:
        kv, row = self.m.kv_dim, [[self.pos, self.pos + 1], [0, self.m.kv_dim]]
        jobs = [{"inputs": [src], "outputs": [cache], "params": {"pos": self.pos, "width": kv},
                 "regions": {cache: row}, "bytes": 8 * kv} for src, cache in ((k, k_cache), (v, v_cache))]
        return self.stage("KV_APPEND", jobs, label)

    def attention(self, q: int, k_cache: int, v_cache: int, out: int, label: str) -> int:
        m, length = self.m, self.pos + 1
        jobs = []
        for h0, h1 in tiles(m.heads, self.s.attn_heads_per_task):
            params = {"head_dim": m.head_dim, "h0": h0, "h1": h1, "n_heads": m.heads,
                      "n_kv_heads": m.kv_heads, "kv_len": length, "scale": m.head_dim ** -0.5}
            groups = len({h // (m.heads // m.kv_heads) for h in range(h0, h1)})
            jobs.append({"inputs": [q, k_cache, v_cache], "outputs": [out], "params": params,
                         "regions": {out: [[0, 1], [h0 * m.head_dim, h1 * m.head_dim]]},
                         "bytes": 8 * groups * m.head_dim * length, "flops": 4 * (h1 - h0) * m.head_dim * length})
        return self.stage("ATTENTION_TILE", jobs, label)

    def silu_mul(self, gate: int, up: int, out: int, label: str) -> int:
        jobs = [{"inputs": [gate, up], "outputs": [out], "params": {"n_off": lo, "N_tile": hi - lo},
                 "regions": {out: [[0, 1], [lo, hi]]}, "bytes": 12 * (hi - lo), "flops": 6 * (hi - lo)}
                for lo, hi in tiles(self.m.intermediate, self.s.silu_tile)]
        return self.stage("SILU_MUL", jobs, label)

    # ------------------------------------------------------------------ the model

    def build(self) -> dict:
        m, s, b = self.m, self.s, self.b
        token = b.buffer("token", "IO_INPUT", [1], dtype="I32")
        emb = self.weight("embed.weight", [m.vocab, m.hidden])
        x = self.act("x0", m.hidden)
        self.stage("EMBED", [{"inputs": [token, emb], "outputs": [x], "params": {"hidden": m.hidden},
                              "bytes": 4 * m.hidden}], "embed")
        for layer in range(m.layers):
            x = self.layer(layer, x)
        xf = self.act("final_norm", m.hidden)
        self.rmsnorm(x, "norm.weight", xf, "final_norm")
        logits = b.buffer("logits", "IO_OUTPUT", [1, m.vocab])
        self.gemv(xf, "lm_head.weight", m.vocab, m.hidden, logits, "lm_head", s.lm_head_tile)
        token_out = b.buffer("next_token", "IO_OUTPUT", [1], dtype="I32")
        self.stage("SAMPLE_ARGMAX", [{"inputs": [logits], "outputs": [token_out],
                                      "params": {"vocab": m.vocab}, "bytes": 4 * m.vocab}], "argmax")
        _place_on_chip(self)
        if s.paging == "graph_color":
            _assign_pages(self)
        return b.doc

    def layer(self, i: int, x: int) -> int:
        m, s, b, p = self.m, self.s, self.b, f"layers.{i}."
        xn, q, k, v = (self.act(f"L{i}.{n}", w) for n, w in
                       (("attn_in", m.hidden), ("q", m.q_dim), ("k", m.kv_dim), ("v", m.kv_dim)))
        self.rmsnorm(x, p + "attn_norm.weight", xn, f"L{i}.attn_norm")
        for name, width, out in (("wq", m.q_dim, q), ("wk", m.kv_dim, k), ("wv", m.kv_dim, v)):
            self.gemv(xn, p + name + ".weight", width, m.hidden, out, f"L{i}.{name}", s.gemv_tile)
        qr, kr = self.act(f"L{i}.q_rope", m.q_dim), self.act(f"L{i}.k_rope", m.kv_dim)
        self.rope(q, m.heads, qr, f"L{i}.rope_q")
        self.rope(k, m.kv_heads, kr, f"L{i}.rope_k")
        caches = [b.buffer(f"L{i}.{n}_cache", "KV_CACHE", [m.max_seq, m.kv_dim], source=f"{p}{n}_cache")
                  for n in ("k", "v")]
        self.appends(kr, v, caches[0], caches[1], f"L{i}.kv_append")
        attn = self.act(f"L{i}.attn", m.q_dim)
        self.attention(qr, caches[0], caches[1], attn, f"L{i}.attention")
        h = self.act(f"L{i}.h", m.hidden)
        self.gemv(attn, p + "wo.weight", m.hidden, m.q_dim, h, f"L{i}.wo", s.gemv_tile, residual=x)
        return self.mlp(i, h)

    def mlp(self, i: int, h: int) -> int:
        m, s, p = self.m, self.s, f"layers.{i}."
        hn, gate, up, act = (self.act(f"L{i}.{n}", w) for n, w in
                             (("mlp_in", m.hidden), ("gate", m.intermediate), ("up", m.intermediate),
                              ("act", m.intermediate)))
        self.rmsnorm(h, p + "mlp_norm.weight", hn, f"L{i}.mlp_norm")
        self.gemv(hn, p + "w_gate.weight", m.intermediate, m.hidden, gate, f"L{i}.w_gate", s.gemv_tile)
        self.gemv(hn, p + "w_up.weight", m.intermediate, m.hidden, up, f"L{i}.w_up", s.gemv_tile)
        self.silu_mul(gate, up, act, f"L{i}.silu_mul")
        out = self.act(f"x{i + 1}", m.hidden)
        self.gemv(act, p + "w_down.weight", m.hidden, m.intermediate, out, f"L{i}.w_down", s.gemv_tile,
                  residual=h)
        return out


def _accessors(doc: dict) -> dict[int, list[dict]]:
    users: dict[int, list[dict]] = {}
    for task in doc["tasks"]:
        for bid in set(task["inputs"] + task["outputs"]):
            users.setdefault(bid, []).append(task)
    return users


def _place_on_chip(low: _Lowering) -> None:
    """With ``smem_local``, an activation touched from a single SM moves to shared memory."""
    if not low.s.smem_local:
        return
    users = _accessors(low.b.doc)
    for buf in low.b.doc["buffers"]:
        tasks = users.get(buf["id"], [])
        if buf["kind"] == "ACTIVATION" and tasks and len({t["sm"] for t in tasks}) == 1:
            buf["space"] = "SMEM"


def _stage_ancestors(low: _Lowering) -> list[set[int]]:
    ancestors: list[set[int]] = []
    for stage in low.stages:
        mine: set[int] = set()
        for p in stage.parents:
            mine |= ancestors[p] | {p}
        ancestors.append(mine)
    return ancestors


def _assign_pages(low: _Lowering) -> None:
    """Greedy page reuse: buffer B joins a page when every stage touching the page's buffers is a
    strict ancestor of every stage touching B (so their live ranges are ordered by full waits)."""
    doc, ancestors = low.b.doc, _stage_ancestors(low)
    stage_of = {tid: si for si, st in enumerate(low.stages) for tid in st.tasks}
    users = _accessors(doc)
    pages: list[tuple[int, str, set[int], list[int]]] = []  # (page id, space, stages, buffers)
    for buf in doc["buffers"]:
        if buf["kind"] != "ACTIVATION" or buf["id"] not in users:
            continue
        mine = {stage_of[t["id"]] for t in users[buf["id"]]}
        home = next((p for p in pages if p[1] == buf["space"]
                     and all(earlier in ancestors[s] for earlier in p[2] for s in mine)), None)
        if home is None:
            home = (low.b.page(buf["space"], 0), buf["space"], set(), [])
            pages.append(home)
        home[2].update(mine)
        home[3].append(buf["id"])
        low.b.bind(buf["id"], home[0])
    _size_pages(doc)


def _size_pages(doc: dict) -> None:
    size = {b["id"]: 4 * b["shape"][-1] for b in doc["buffers"]}
    for page in doc["pages"]["pages"]:
        page["nbytes"] = max(size[int(bid)] for bid, pid in doc["pages"]["buffer_to_page"].items()
                             if pid == page["id"])


def lower(model: ModelConfig, sched: ScheduleConfig, pos: int = 0, target: dict | None = None) -> dict:
    """The schedule document of one decode step at position ``pos``."""
    target = dict(target or toy_target(sched.num_sms))
    if sched.num_sms > target["num_sms"]:
        raise UserError(f"schedule wants {sched.num_sms} SMs but target {target['name']} has "
                        f"{target['num_sms']}; lower num_sms")
    if not 0 <= pos < model.max_seq:
        raise UserError(f"position {pos} is outside the KV cache (max_seq {model.max_seq}); "
                        "raise ModelConfig.max_seq or use a smaller position")
    return _Lowering(model, sched, pos, target).build()
