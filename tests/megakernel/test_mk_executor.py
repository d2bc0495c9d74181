"""The persistent executor's control flow and numerics in Triton's interpreter (CPU).

The interpreter runs programs one after another, so these schedules never make a program wait on a
later one, except where that is the point (a wait nobody can satisfy must end with the flag, fast).
GPU runs of the same code: test_mk_executor_gpu.py.
"""

import json
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from harness.megakernel.builder import ScheduleBuilder  # noqa: E402
from harness.megakernel.configs import ScheduleConfig  # noqa: E402
from harness.megakernel.executor import Megakernel  # noqa: E402
from harness.megakernel.executor_check import decode, in_program_order  # noqa: E402
from harness.megakernel.executor_pack import ExecutorError, pack  # noqa: E402
from harness.megakernel.suite import VM_MODELS, VM_SCHEDULES  # noqa: E402
from harness.megakernel.validator import validate  # noqa: E402

# Some of these orders only hold in the interpreter (programs one after another); on a GPU the same
# schedules race. The GPU's own tests are in test_mk_executor_gpu.py.
pytestmark = pytest.mark.skipif(__import__("os").environ.get("TRITON_INTERPRET") != "1",
                                reason="runs in Triton's interpreter: set TRITON_INTERPRET=1")
DEVICE = "cpu"
AMK = Path("/work/shared/megakernel/amk_samples")


def _vectors(n=4):
    """Buffers of a two-task chain: x (input), y (scratch), z (output)."""
    b = ScheduleBuilder({"name": "t", "num_sms": 2})
    x = b.buffer("x", "IO_INPUT", [1, n])
    y = b.buffer("y", "ACTIVATION", [1, n], space="GLOBAL_SCRATCH")
    z = b.buffer("z", "IO_OUTPUT", [1, n])
    return b, x, y, z


def chain(wait=True, reader_sm=1, writer_sm=0, space="GLOBAL_SCRATCH"):
    """y = x + x on the writer's SM, then z = y + y on the reader's, waiting for y unless told not to."""
    b, x, y, z = _vectors()
    b.doc["buffers"][y]["space"] = space
    made, done = b.counter("y"), b.counter("z")
    if reader_sm < writer_sm:   # the reader's program comes first in the interpreter
        b.task("ADD", [y, y], [z], done, waits=[(made, 1)] if wait else [], sm=reader_sm)
        b.task("ADD", [x, x], [y], made, sm=writer_sm)
    else:
        b.task("ADD", [x, x], [y], made, sm=writer_sm)
        b.task("ADD", [y, y], [z], done, waits=[(made, 1)] if wait else [], sm=reader_sm)
    return b.doc


def run(doc, check=True, bound=64, inputs=None):
    mk = Megakernel({}, DEVICE, spin_bound=bound)
    prepared = mk.prepare(doc, check=check)
    return prepared, prepared.step(inputs or {"x": [1.0, 2.0, 3.0, 4.0]})


def test_a_chain_across_two_programs_passes_its_counter_and_resets_it():
    prepared, launch = run(chain())
    assert launch.ok
    assert launch.outputs["z"].tolist() == [[4.0, 8.0, 12.0, 16.0]]
    assert prepared.counters.tolist() == [0, 0, 0]   # the last program out reset them for the next launch
    assert prepared.status.view(-1, 4)[:, 0].tolist() == [1, 1]
    again = prepared.step({"x": [0.5, 0.5, 0.5, 0.5]})
    assert again.ok and again.outputs["z"].tolist() == [[2.0, 2.0, 2.0, 2.0]]


def test_a_wait_nobody_signals_ends_with_the_flag_quickly():
    b, x, y, z = _vectors()
    never, made, done = b.counter("never"), b.counter("y"), b.counter("z")
    b.task("ADD", [x, x], [y], made, waits=[(never, 1)], sm=0)
    b.task("ADD", [x, x], [z], done, sm=1)
    assert "wait_unproduced" in validate(b.doc).classes
    started = time.perf_counter()
    prepared, launch = run(b.doc, check=False, bound=40)
    assert time.perf_counter() - started < 20
    assert not launch.ok
    assert launch.deadlock["stuck"] == [{"program": 0, "task": 0, "counter": never, "seen": 0, "finished": 0, "queue": 1}]
    assert launch.outputs["z"].tolist() == [[2.0, 4.0, 6.0, 8.0]]   # the other program still ran its queue
    assert prepared.flag.item() == 0 and prepared.counters.tolist() == [0, 0, 0, 0]


def test_an_abort_stops_the_other_programs_before_their_own_bound():
    b, x, y, z = _vectors()
    never, made, done = b.counter("never"), b.counter("y"), b.counter("z")
    b.task("ADD", [x, x], [y], made, waits=[(never, 1)], sm=0)
    b.task("ADD", [y, y], [z], done, waits=[(made, 1)], sm=1)
    # Program 0 runs first in the interpreter, spins to its bound and raises the flag; program 1
    # then sees the flag at its first look (every CHECK_EVERY spins), long before its own bound.
    prepared, launch = run(b.doc, check=False, bound=200)
    stuck = {row["program"]: row for row in launch.deadlock["stuck"]}
    assert set(stuck) == {0, 1} and stuck[1]["task"] == 1 and stuck[1]["counter"] == made
    assert launch.deadlock["unfinished_programs"] == 2
    assert torch.isnan(launch.outputs["z"]).all()   # poisoned output, never written


def test_a_read_that_does_not_wait_reads_poison():
    # The reader's program runs before the writer's in the interpreter: without its wait it reads NaN.
    doc = chain(wait=False, reader_sm=0, writer_sm=1)
    assert "raw" in validate(doc).classes
    _, launch = run(doc, check=False)
    assert launch.ok and torch.isnan(launch.outputs["z"]).all()


def test_an_onchip_buffer_written_on_one_sm_is_not_there_on_another():
    doc = chain(space="SMEM")
    assert "onchip_cross_sm" in validate(doc).classes
    _, launch = run(doc, check=False)
    assert torch.isnan(launch.outputs["z"]).all()
    _, same_sm = run(chain(space="SMEM", reader_sm=0), check=False)
    assert same_sm.outputs["z"].tolist() == [[4.0, 8.0, 12.0, 16.0]]


def test_rejected_schedules_are_refused_unless_checks_are_off():
    with pytest.raises(ExecutorError, match="refuses.*raw"):
        run(chain(wait=False, reader_sm=0, writer_sm=1))


def test_a_launch_contract_breach_never_runs_even_with_checks_off():
    doc = chain()
    doc["tasks"][1]["sm"] = 7
    with pytest.raises(ExecutorError, match="sm_out_of_range.*launch contract"):
        run(doc, check=False)


def test_amk_schedules_are_placed_as_amk_loads_them_and_their_own_op_parameters_are_named():
    from harness.megakernel.amk_io import normalise
    from harness.megakernel.executor import _placed_as_amk_loads

    path = AMK / "valid_0001.json"
    if not path.exists():
        pytest.skip("AMK samples not present")
    doc = json.loads(path.read_text())
    assert any(task.get("sm") is None for task in doc["tasks"])
    placed = _placed_as_amk_loads(normalise(doc))
    assert all(type(task["sm"]) is int for task in placed["tasks"])
    # AMK's attention and RoPE take parameters of their own (heads from a buffer, a position buffer)
    # that this executor's op set does not implement: it says which, instead of running them wrong.
    with pytest.raises(ExecutorError, match="parameter"):
        Megakernel({}, DEVICE).prepare(doc)


def test_pack_names_unknown_ops_and_accesses_outside_a_buffer():
    doc = chain()
    doc["tasks"][0]["op"] = "FFT"
    with pytest.raises(ExecutorError, match="op FFT has no device code"):
        pack(doc)
    b, x, y, z = _vectors()
    done = b.counter()
    w = b.buffer("w", "WEIGHT", [2, 4], source="w")
    b.task("GEMV_TILE", [x, w], [z], done, params={"K": 4, "N_tile": 4, "n_off": 0})
    with pytest.raises(ExecutorError, match="at least 16 elements"):
        pack(b.doc)


def test_queues_are_packed_in_task_order_per_sm():
    doc = in_program_order(chain(), 2)
    doc["tasks"].reverse()   # now SM 1's task comes first in the list; queues still group by SM
    packed = pack(doc)
    assert packed.queue_start == [0, 1, 2] and packed.task_ids == [0, 1]


@pytest.mark.parametrize("model", ["tiny", "gqa2"])
def test_llama_lowering_decodes_like_eager_and_the_vm(model):
    sched = VM_SCHEDULES[1]    # tiled GEMVs, lm head, SiLU and one head per attention task
    result = decode(VM_MODELS[model], sched, steps=3, device=DEVICE, place=lambda d: in_program_order(d, 3),
                    spin_bound=64)
    assert result.ok, result.to_dict()
    assert result.steps == 3 and result.device_tokens[-1] == result.tokens[-1]


def test_paged_shared_memory_lowering_on_one_sm_matches():
    sched = ScheduleConfig(num_sms=1, gemv_tile=4, attn_heads_per_task=1, paging="graph_color", smem_local=True)
    result = decode(VM_MODELS["mha"], sched, steps=2, device=DEVICE, spin_bound=64)
    assert result.ok, result.to_dict()


_COMPILE = """
import json, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from harness.megakernel.executor_kernel import megakernel
signature = {"f": "*fp32", "i": "*i32", "rows": "*i64", "fparams": "*fp32", "queue_start": "*i32",
             "counters": "*i32", "n_counters": "i32", "flag": "*i32", "status": "*i32", "bound": "i32"}
constants = {"BLOCK": 1024, "BN": 64, "BK": 128, "BD": 64, "BL": 32, "CHECK_EVERY": 64}
signature.update({name: "constexpr" for name in constants})
compiled = triton.compile(ASTSource(fn=megakernel, signature=signature, constexprs=constants),
                          target=GPUTarget("cuda", 90, 32), options={"num_warps": 8})
sys.stdout.write(compiled.asm["ptx"])
"""


def test_the_kernel_compiles_for_hopper_with_acquire_waits_and_release_signals():
    """Compiled ahead of time for sm_90 (no GPU needed): the waits are acquire loads, the signal a
    release increment, with a CTA barrier before it so every thread's stores come first."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", _COMPILE], capture_output=True, text=True, env=env, timeout=300)
    if done.returncode and ("ptxas" in done.stderr or "ImportError" in done.stderr):
        pytest.skip(f"this Triton cannot compile for CUDA here: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    ptx = done.stdout
    assert "gpu.acquire" in ptx or "gpu.acq" in ptx
    release = ptx.index("gpu.release.add")
    assert "bar.sync" in ptx[:release]


def test_eager_decode_step_matches_the_full_sequence_reference():
    from harness.megakernel.executor_eager import EagerDecode
    from harness.megakernel.llama_ref import EagerLlama, init_weights

    model = VM_MODELS["gqa2"]
    weights = init_weights(model, 3)
    step, full, tokens = EagerDecode(model, weights, "cpu"), EagerLlama(model, weights), [4, 9, 1, 30]
    for pos in range(len(tokens)):
        got = step.step(torch.tensor([tokens[pos]]), pos)
        assert torch.allclose(got, full(torch.tensor(tokens[:pos + 1]))[-1], atol=1e-5, rtol=1e-5)


def test_decode_against_eager_decode_agrees_on_one_sm():
    from harness.megakernel.executor_check import decode_against_eager, device_weights

    model = VM_MODELS["tiny"]
    sched = ScheduleConfig(num_sms=1, gemv_tile=4, lm_head_tile=8)
    result = decode_against_eager(model, sched, device_weights(model, 1, "cpu"), steps=3, device="cpu",
                                  mk=Megakernel(device_weights(model, 1, "cpu"), DEVICE, spin_bound=64))
    assert result["ok"] and result["steps"] == 3, result


def test_the_sandbox_gives_verdicts_and_outlives_a_child_that_dies():
    from harness.megakernel import executor_safety

    model = VM_MODELS["tiny"]
    found = executor_safety.cases(model, [VM_SCHEDULES[1]], per_class=1, classes=("raise_threshold",),
                                  place=lambda d: in_program_order(d, 3))
    broken = dict(found[0], id="broken", doc={**found[0]["doc"], "tasks": [dict(t) for t in found[0]["doc"]["tasks"]]})
    broken["doc"]["tasks"][0]["params"] = {}          # EMBED without 'hidden': the child raises on it
    outcomes = executor_safety.run_sandboxed(model, [broken] + found, device=DEVICE, spin_bound=64)
    by_id = {o["id"]: o for o in outcomes}
    assert by_id["broken"]["outcome"] == "crashed" and "hidden" in by_id["broken"]["detail"]
    assert by_id["s0/lowering"]["outcome"] == "right"
    deadlocks = [o for o in outcomes if o["family"] == "deadlock"]
    assert deadlocks and all(o["outcome"] == "deadlock" for o in deadlocks)
    summary = executor_safety.summarize(outcomes)
    assert summary["deadlock_flagged"] == summary["deadlock_rejects"] == len(deadlocks)


def test_search_ranks_by_measured_gpu_time_where_there_is_one():
    from harness.megakernel.search import Entry, Search

    fast_estimate = Entry(None, "random", "kept", cost={"makespan_us": 1.0, "gpu_us": 9.0})
    slow_estimate = Entry(None, "random", "kept", cost={"makespan_us": 5.0, "gpu_us": 2.0})
    unmeasured = Entry(None, "random", "kept", cost={"makespan_us": 3.0})
    assert [e.score_us for e in (fast_estimate, slow_estimate, unmeasured)] == [9.0, 2.0, 3.0]
    search = Search(VM_MODELS["tiny"], ["random"], measure="auto")
    assert search.measure is False   # under the interpreter, GPU or not
    search.history = [fast_estimate, slow_estimate, unmeasured]
    assert search.ranked() == [slow_estimate, unmeasured, fast_estimate]
    assert Search(VM_MODELS["tiny"], ["random"], measure="off").measure is False


def test_race_trials_hold_back_each_writer_the_reader_does_not_wait_for():
    from harness.megakernel import executor_safety
    from harness.megakernel.lowering import lower

    doc = lower(VM_MODELS["gqa2"], VM_SCHEDULES[1], 1)
    silu = next(t for t in doc["tasks"] if t["op"] == "SILU_MUL" and t["params"]["n_off"] > 0)
    gate = silu["inputs"][0]
    silu["waits"] = []    # (dropping only the gate wait is safe here: the up tiles queue behind the gate tiles)
    verdict = validate(doc)
    race = next(v for v in verdict.violations if v["class"] == "raw" and v["witness"]["buffer"] == gate)
    trials = executor_safety._trials(doc, race)
    writers = {t["id"] for t in doc["tasks"] if gate in t["outputs"]}
    held = {task for trial in trials for task in trial}
    assert all(len(trial) == 1 for trial in trials) and held <= writers and race["witness"]["writer"] in held
    same_sm_before = {t["id"] for t in doc["tasks"][:silu["id"]] if t["sm"] == silu["sm"]}
    assert held == writers - same_sm_before   # queue order still puts this SM's own gate tiles first
    # a tile whose columns this SiLU tile reads is among them, whatever the witness named
    lo, hi = silu["params"]["n_off"], silu["params"]["n_off"] + silu["params"]["N_tile"]
    assert any(lo < t["params"]["n_off"] + t["params"]["N_tile"] and t["params"]["n_off"] < hi
               for t in doc["tasks"] if t["id"] in held)


def test_packing_any_runnable_schedule_either_works_or_names_what_it_cannot_run():
    """Mutants of lowerings (every fault class) and random schedules: whatever the validator does not
    call structural packs, or fails with ExecutorError (the random ones use a placeholder op with no
    device code); every operand of every packed row lies inside its arena."""
    import copy
    import random

    from harness.megakernel.executor_pack import C_IN, C_NIN, C_OUT, I32
    from harness.megakernel.lowering import lower
    from harness.megakernel.mutations import MUTATIONS
    from harness.megakernel.randdag import random_schedule

    base = lower(VM_MODELS["gqa2"], VM_SCHEDULES[3], 2)
    docs = []
    for index, name in enumerate(sorted(MUTATIONS)):
        for seed in range(3):
            doc = copy.deepcopy(base)
            if MUTATIONS[name](doc, random.Random(seed * 31 + index)):
                docs.append(doc)
    docs += [random_schedule(random.Random(seed)) for seed in range(40)]
    packed_count = 0
    for doc in docs:
        if validate(doc).family == "structural":
            continue
        try:
            packed = pack(doc)
        except ExecutorError as error:
            assert "has no device code" in str(error) or "dtype" in str(error), error
            continue
        packed_count += 1
        sizes = {"F32": packed.layout.f32_size, I32: packed.layout.i32_size}
        dtype = {b["id"]: b["dtype"] for b in doc["buffers"]}
        by_id = {t["id"]: t for t in doc["tasks"]}
        for row, tid in zip(packed.rows, packed.task_ids):
            task = by_id[tid]
            assert row[C_NIN] == len(task["inputs"])
            for column, buffer in [(C_IN + j, b) for j, b in enumerate(task["inputs"])] + \
                                  [(C_OUT + j, b) for j, b in enumerate(task["outputs"])]:
                assert 0 <= row[column] < sizes[dtype[buffer]]
    assert packed_count > 30


def test_argmax_takes_the_first_maximum_across_blocks_as_torch_does():
    n = 40   # several of the interpreter's 16-wide blocks
    b = ScheduleBuilder({"name": "t", "num_sms": 1})
    x = b.buffer("x", "IO_INPUT", [1, n])
    out = b.buffer("next_token", "IO_OUTPUT", [1], dtype="I32")
    b.task("SAMPLE_ARGMAX", [x], [out], b.counter(), params={"vocab": n})
    prepared = Megakernel({}, DEVICE, spin_bound=8).prepare(b.doc)
    values = torch.randn(n, generator=torch.Generator().manual_seed(0))
    for ties in ((7, 33), (33, 39), (3,)):
        v = values.clone()
        v[list(ties)] = v.max() + 1
        assert int(prepared.step({"x": v}).outputs["next_token"][0]) == int(v.argmax()) == ties[0]


def test_our_lowering_written_as_amk_ir_is_refused_by_amks_op_rules():
    # Our lowering's RoPE and KV append take one input where AMK's take more: exported as AMK IR and
    # read back, AMK's per-op rules apply, and the executor refuses it as a broken launch contract.
    from harness.megakernel.amk_io import to_amk
    from harness.megakernel.lowering import lower

    doc = lower(VM_MODELS["tiny"], ScheduleConfig(num_sms=1, gemv_tile=4), 0)
    amk = to_amk(doc)
    assert "ir_version" in amk and "format" not in amk
    with pytest.raises(ExecutorError, match="bad_op"):
        Megakernel({}, DEVICE, spin_bound=16).prepare(amk)


def test_a_prepared_schedule_refuses_to_launch_on_another_layout():
    mk = Megakernel({}, DEVICE, spin_bound=16)
    first = mk.prepare(chain())
    mk.prepare(chain(space="SMEM", reader_sm=0))     # another layout: per-SM copies of y
    with pytest.raises(ExecutorError, match="prepare it again"):
        first.step({"x": [1.0, 2.0, 3.0, 4.0]})
    again = mk.prepare(chain())
    assert again.step({"x": [1.0, 2.0, 3.0, 4.0]}).outputs["z"].tolist() == [[4.0, 8.0, 12.0, 16.0]]


def test_the_demonstration_counts_each_claim_and_keeps_region_only_races_apart():
    from harness.megakernel.executor_safety import summarize

    def o(outcome, accepted=False, family=None, cls=None, case="x"):
        return {"id": case, "accepted": accepted, "family": family, "cls": cls, "outcome": outcome}

    s = summarize([o("right", True, case="a"), o("wrong", True, case="b"), o("deadlock", family="deadlock", cls="cycle"),
                   o("right", family="deadlock", cls="self_wait"), o("wrong", family="race", cls="raw"),
                   o("right", family="race", cls="first_k_of_n"), o("right", family="race", cls="waw", case="w")])
    assert (s["accepted"], s["accepted_right"]) == (2, 1)
    assert (s["deadlock_rejects"], s["deadlock_flagged"]) == (2, 1)
    assert (s["race_rejects"], s["race_shown"]) == (2, 1)
    assert s["other_race_rejects"] == {"w": "right"}
    assert s["by_verdict"]["accepted"] == {"right": 1, "wrong": 1}
