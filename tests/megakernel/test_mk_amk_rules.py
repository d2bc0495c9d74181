"""AMK's dialect: per-opcode rules, prior-step KV state, GEMM tile regions, loader placement."""

import json
from pathlib import Path

import pytest

from harness.megakernel import oracle, placement
from harness.megakernel.amk_io import normalise, tile_regions
from harness.megakernel.validator import validate

SAMPLES = Path(__file__).parent / "fixtures" / "amk_samples"


def _valid() -> dict:
    return json.loads((SAMPLES / "valid_0137.json").read_text())


def _first(amk: dict, op: str) -> dict:
    return next(t for t in amk["tasks"] if t["op"] == op)


@pytest.mark.parametrize("edit, fragment", [
    (lambda a: _first(a, "RMSNORM")["inputs"].pop(), "1 inputs"),
    (lambda a: _first(a, "GEMV_TILE")["params"].pop("K"), "missing parameter 'K'"),
    (lambda a: _first(a, "ADD").update(op="MATMUL_FAST"), "unknown op"),
    (lambda a: _first(a, "ROPE")["params"].update(head_dim=2.5), "int32"),
    (lambda a: _first(a, "KV_APPEND").update(outputs=[_first(a, "ADD")["outputs"][0]]), "KV_CACHE"),
])
def test_per_opcode_rules_reject_what_amks_loader_refuses(edit, fragment):
    amk = _valid()
    edit(amk)
    doc = normalise(amk)
    verdict = validate(doc)
    assert not verdict.ok and verdict.classes == ["bad_op"], verdict.report()
    assert fragment in verdict.violations[0]["message"]
    assert oracle.label(doc)["mode"] == "structural"


def test_a_kv_cache_read_without_an_append_this_step_reads_prior_state():
    amk = _valid()
    appends = [t for t in amk["tasks"] if t["op"] == "KV_APPEND"]
    for task in appends:  # attention then reads the caches as the earlier steps left them
        task.update(op="NOP", inputs=[], outputs=[], params={})
    doc = normalise(amk)
    verdict = validate(doc)
    assert verdict.ok, verdict.report()
    assert oracle.label(doc, any_placement=False)["safe"]


def test_gemm_tiles_cover_their_rows_and_columns():
    shapes = {7: [4, 8]}
    task = {"op": "GEMM_TILE", "outputs": [7], "params": {"M_tile": 2, "m_off": 2, "N_tile": 4, "n_off": 4}}
    assert tile_regions(task, shapes) == [{"buffer": 7, "box": [[2, 4], [4, 8]]}]
    task["params"].pop("m_off")
    assert tile_regions(task, shapes) == [{"buffer": 7, "box": [[0, 4], [4, 8]]}]


def test_an_out_of_bounds_tile_is_its_own_class():
    amk = _valid()
    _first(amk, "GEMV_TILE")["params"]["n_off"] = 10_000
    verdict = validate(normalise(amk))
    assert "tile_out_of_bounds" in verdict.classes and "malformed" not in verdict.classes


def test_loader_keeps_assigned_sms_in_range_and_places_the_rest_on_sm_0():
    tasks = [{"id": i, "sm": sm, "est_bytes": 0, "est_flops": 0} for i, sm in enumerate([None, 3, None])]
    assert placement.loader_sms(tasks, [0, 1, 2], 4) == [0, 3, 0]
    tasks[1]["sm"] = 9  # out of the grid: the loader balances every task instead
    assert placement.loader_sms(tasks, [0, 1, 2], 4) == [0, 1, 2]


def test_loader_balances_by_bytes_then_flops_then_count_over_the_topological_order():
    tasks = [{"id": i, "sm": None, "est_bytes": b, "est_flops": 0} for i, b in enumerate([100, 1, 1, 1])]
    assert placement.loader_sms(tasks, [0, 1, 2, 3], 2) == [0, 1, 1, 1]


def test_topological_order_is_kahn_first_in_first_out_lowest_id_first():
    tasks = [{"id": 0, "out_counter": 0, "waits": []}, {"id": 1, "out_counter": 1, "waits": [{"counter": 2, "threshold": 1}]},
             {"id": 2, "out_counter": 2, "waits": []}, {"id": 3, "out_counter": 3, "waits": [{"counter": 0, "threshold": 1}]}]
    order, _ = placement.topological_order(tasks)
    assert [tasks[i]["id"] for i in order] == [0, 2, 3, 1]
    tasks[0]["waits"] = [{"counter": 0, "threshold": 1}]  # waits on itself: a cycle
    assert placement.topological_order(tasks)[0] is None


def test_a_schedule_safe_only_under_the_loader_says_so():
    amk = _valid()
    doc = normalise(amk)
    # an on-chip activation shared by two tasks: unsafe when they may run on different SMs, safe
    # where the loader, on a one-SM grid, puts every task on SM 0
    doc["target"]["num_sms"] = doc["target"]["max_resident"] = 1
    buf = next(b for b in doc["buffers"] if b["name"] == "L0.an")
    buf["space"] = "SMEM"
    verdict = validate(doc)
    assert verdict.ok and verdict.safety == "safe_amk_loader", verdict.report()
    assert verdict.stats["any_placement_classes"] == ["onchip_cross_sm"]


def test_amk_dialect_corpus_sample_has_no_false_accepts_or_rejects_against_the_exact_oracle():
    from harness.megakernel import amk_corpus

    items = amk_corpus.build(seed=7, size=300)
    assert len(items) == 300 and all(t["sm"] is None or type(t["sm"]) is int for i in items for t in i.doc["tasks"])
    result = amk_corpus.score(items)
    for view, row in result["all"].items():
        assert row["false_accept"] == row["false_reject"] == 0, (view, result["mistakes"])
        assert row["sampled"] == 0 and row["true_accept"] > 20 and row["true_reject"] > 20, (view, row)
    assert {"lowering", "random", "mut/skip_append", "mut/unknown_op"} <= set(result["per_class"])


def test_random_field_edits_of_amk_schedules_never_raise_and_agree_with_the_oracle():
    import random

    from mk_schedules import paths, replace_at

    rng = random.Random(11)
    values = [None, -1, 0, 1, 2, 99, 1.0, "1", [], {}, [1], True, "GEMV_TILE", "KV_CACHE", "SMEM"]
    for name in ("random_0500", "valid_0288"):
        base = normalise(json.loads((SAMPLES / f"{name}.json").read_text()))
        sites = list(paths(base))
        for _ in range(120):
            doc = replace_at(base, rng.choice(sites), rng.choice(values))
            verdict = validate(doc)
            truth = oracle.label(doc, max_states=3000, runs=2)
            structural = verdict.stats.get("phase") in ("structure", "ops", "placement")
            assert "internal_error" not in verdict.classes and structural == (truth["mode"] == "structural"), \
                (verdict.report(), truth)
            if not structural and truth["mode"] == "exhaustive":
                assert verdict.ok == truth["safe"], (verdict.report(), truth)


def test_on_chip_memory_two_tasks_touch_is_never_safe_under_every_placement():
    buf = {"dtype": "F32", "shape": [1, 4], "source": None}
    amk = {"ir_version": "0.2.0", "abi_version": "0.2", "meta": {}, "target": {"name": "toy", "num_sms": 4},
           "buffers": [{**buf, "id": 0, "name": "x", "kind": "IO_INPUT", "space": "HBM"},
                       {**buf, "id": 1, "name": "s", "kind": "ACTIVATION", "space": "SMEM"}],
           "counters": [{"id": 0, "init": 0, "note": ""}, {"id": 1, "init": 0, "note": ""}],
           "tasks": [{"id": i, "op": "COPY", "inputs": [0], "outputs": [1], "out_counter": i, "waits": [],
                      "params": {}, "sm": None, "est_bytes": 0, "est_flops": 0, "label": ""} for i in (0, 1)],
           "pages": None, "config": None}
    doc = normalise(amk)
    verdict = validate(doc)  # two writers of per-SM copies: safe where the loader puts them
    assert verdict.ok and verdict.safety == "safe_amk_loader", verdict.report()
    assert verdict.stats["any_placement_classes"] == ["onchip_placement"]
    truth = oracle.label(doc)
    assert truth["safe"] and not truth["safe_any"]
