"""The native fast path (harness/megakernel/_mkfast.c) gives the pure-Python verdicts: on the twelve
AMK samples, a sample of the AMK-dialect corpus, AMK lowerings of our models and single-field edits
of valid schedules, ``validate(normalise(doc))`` is the same with it on and off, and so is the
imported document, and ``validate(doc)`` on the document as AMK wrote it (read natively as the
import would make it) gives the same verdict again. Where the extension is not built in place, it is built here (a C compiler
and Python's headers are needed; without them these tests skip and say why)."""

import copy
import json
import random
import shutil
import subprocess
import sys
import sysconfig
from importlib.machinery import ExtensionFileLoader
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path

import pytest
from mk_schedules import paths, replace_at

from harness.megakernel import amk_corpus, amk_io, fastpath
from harness.megakernel.amk_io import normalise
from harness.megakernel.configs import ModelConfig, ScheduleConfig
from harness.megakernel.validator import validate

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((Path(__file__).parent / "fixtures" / "amk_samples").glob("*.json"))


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    if fastpath.native is not None:
        return fastpath.native
    if shutil.which(sysconfig.get_config_var("CC").split()[0] if sysconfig.get_config_var("CC") else "cc") is None:
        pytest.skip("no C compiler: the validator runs in pure Python (the fast path is optional)")
    out = tmp_path_factory.mktemp("mkfast")
    built = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(out / "lib"),
                            "--build-temp", str(out / "tmp")], cwd=ROOT, capture_output=True, text=True)
    assert built.returncode == 0, f"building the native fast path failed:\n{built.stderr[-3000:]}"
    path = next((out / "lib").rglob("_mkfast*"))
    spec = spec_from_file_location("harness.megakernel._mkfast", path,
                                   loader=ExtensionFileLoader("harness.megakernel._mkfast", str(path)))
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return fastpath.configure(module)


def _both(native, doc, monkeypatch):
    """(verdict, imported document) with the fast path off, then on; each checked against the
    verdict on the document as AMK wrote it (``validate`` imports it only where it must)."""
    results = []
    for on in (False, True):
        monkeypatch.setattr(fastpath, "native", native if on else None)
        monkeypatch.setattr(fastpath, "enabled", on)
        as_written = validate(copy.deepcopy(doc))
        try:
            imported = normalise(copy.deepcopy(doc))
        except Exception as error:  # (the import of some malformed documents raises: alike, then)
            assert not as_written.ok and as_written.classes == ["malformed"] and as_written.violations
            results.append((type(error).__name__, str(error)))
            continue
        verdict = validate(imported)
        assert (as_written.to_dict(), as_written.safety) == (verdict.to_dict(), verdict.safety)
        results.append((verdict.to_dict(), verdict.safety, json.dumps(imported)))
    return results


def _agree(native, doc, monkeypatch):
    pure, fast = _both(native, doc, monkeypatch)
    assert fast == pure
    return pure


def _amk_docs():
    docs = [json.loads(p.read_text()) for p in SAMPLES]
    docs += [item.doc for item in amk_corpus.build(seed=5, size=300)]
    wide = ModelConfig(hidden=32, layers=2, heads=4, kv_heads=2, head_dim=8, intermediate=64, vocab=32, max_seq=16)
    for sms, tile in ((4, 4), (8, 0)):
        docs.append(amk_corpus.amk_lowering(wide, ScheduleConfig(num_sms=sms, gemv_tile=tile), 5))
    return docs


def test_verdicts_and_imports_agree_with_the_fast_path_on_and_off(native, monkeypatch):
    accepted = proven = 0
    for doc in _amk_docs():
        accepted += _agree(native, doc, monkeypatch)[1] == "safe_any_placement"
        proven += native.judge(normalise(copy.deepcopy(doc))) is False
    # (the comparison covers both of the fast path's verdicts, not only its refusals to answer)
    assert accepted >= 20 and proven >= 20


def test_verdicts_agree_where_the_loader_puts_several_tasks_on_one_sm(native, monkeypatch):
    """Grids of 1-4 SMs: the loader's placement (order, least-loaded SM, queues) decides races."""
    proven = 0
    for n, item in enumerate(amk_corpus.build(seed=7, size=400)):
        amk = copy.deepcopy(item.doc)
        if type(amk.get("target")) is dict:
            amk["target"]["num_sms"] = 1 + n % 4
            amk["target"].pop("max_resident", None)
        if len(_agree(native, amk, monkeypatch)) == 3:  # (else the import raised, alike with and without)
            proven += native.judge(normalise(amk)) is False
    assert proven >= 50


def test_the_fast_path_proves_common_rejections_itself_and_python_names_them(native, monkeypatch):
    monkeypatch.setattr(fastpath, "native", native)
    monkeypatch.setattr(fastpath, "enabled", True)
    named = {}
    for path in SAMPLES:
        doc = normalise(json.loads(path.read_text()))
        if path.stem.startswith("valid"):
            continue
        assert native.judge(doc) is False, path.stem
        verdict = validate(doc)
        assert type(verdict).__name__ == "_ProvenUnsafe" and not verdict.ok and verdict.safety == "unsafe"
        named[path.stem] = verdict.classes  # (worked out on this first read)
        assert verdict.violations and verdict.violations[0]["witness"] is not None and verdict.stats
    assert named["mutant_cycle_0003"] == ["dependency_cycle"] and named["random_0011"] == ["write_readonly"]
    assert named["mutant_oob_buffer_0002"] == ["dangling_ref"] and named["mutant_drop_wait_0020"] == ["raw"]
    # a partial wait with more tasks than SMs: a race where the loader places them, found natively
    assert named["mutant_partial_shared_0010"] == ["first_k_of_n"]


def test_a_proven_rejection_read_after_its_document_changed_says_so(native, monkeypatch):
    monkeypatch.setattr(fastpath, "native", native)
    monkeypatch.setattr(fastpath, "enabled", True)
    amk = json.loads((SAMPLES[0].parent / "random_0011.json").read_text())
    doc = normalise(amk)
    verdict = validate(doc)
    doc.clear()
    doc.update(normalise(json.loads((SAMPLES[0].parent / "valid_0288.json").read_text())))
    assert not verdict.ok and verdict.classes == ["internal_error"]
    assert "changed after validate()" in verdict.violations[0]["message"]


def test_the_fast_path_proves_the_valid_samples_itself(native):
    for path in SAMPLES:
        if path.stem.startswith("valid"):
            doc = normalise(json.loads(path.read_text()))
            assert native.accept(doc) == (len(doc["tasks"]), len(doc["counters"])), path.stem


def test_the_fast_path_leaves_rejected_and_unusual_schedules_to_python(native):
    for path in SAMPLES:
        doc = normalise(json.loads(path.read_text()))
        if not path.stem.startswith("valid"):
            assert native.accept(doc) is None, path.stem
    doc = normalise(json.loads(SAMPLES[-1].read_text()))
    for edit in (lambda d: d.update(pages={"buffer_to_page": {}, "pages": []}),
                 lambda d: d["buffers"][0].update(space="SMEM"),
                 lambda d: d["tasks"][3].update(id=True),
                 lambda d: d["tasks"][3].update(sm=0)):
        edited = copy.deepcopy(doc)
        edit(edited)
        assert native.accept(edited) is None


def test_single_field_edits_of_valid_schedules_get_the_same_verdict(native, monkeypatch):
    rng = random.Random(11)
    values = [None, -1, 0, 1, 2, 3, 7, 2 ** 40, 1.0, "1", "SMEM", "KV_CACHE", [], {}, [1], [[0, 1]], True]
    bases = [json.loads(p.read_text()) for p in SAMPLES if p.stem in ("valid_0137", "valid_0288")]
    for base in bases:
        where = list(paths(base))
        for _ in range(150):
            _agree(native, replace_at(base, rng.choice(where), rng.choice(values)), monkeypatch)


def test_keys_that_run_code_of_their_own_are_left_to_python(native):
    """A parameter key that is not a str may compare equal to one (its own __hash__ and __eq__)
    and change the document while it is read: the native code never looks such a key up."""
    amk = json.loads((SAMPLES[0].parent / "valid_0288.json").read_text())
    calls, armed = [], []

    class Key:
        def __hash__(self):
            return hash("K")

        def __eq__(self, other):
            if armed:
                calls.append(other)
                amk["tasks"].clear()  # (what such code could do to the document being read)
            return False

    tile = next(task for task in amk["tasks"] if task["op"] == "GEMV_TILE")
    tile["params"][Key()] = 1
    armed.append(True)
    assert native.tasks_from_amk(amk["tasks"], amk["buffers"], frozenset({"GEMV_TILE", "GEMM_TILE"})) is None
    assert not calls
    armed.clear()
    doc = normalise(json.loads((SAMPLES[0].parent / "valid_0288.json").read_text()))
    amk = doc  # (the key now changes the imported document)
    next(task for task in doc["tasks"] if task["op"] == "GEMV_TILE")["params"][Key()] = 1
    armed.append(True)
    assert native.judge(doc) is None and not calls
    assert validate(doc).safety is not None  # (Python's verdict, whatever the key did)


def test_amk_documents_as_written_are_judged_without_importing_them(native, monkeypatch):
    """The native path reads AMK's own document as the import would make it: valid samples and
    proven rejections need no import, and the import runs when a rejection's violations are read."""
    monkeypatch.setattr(fastpath, "native", native)
    monkeypatch.setattr(fastpath, "enabled", True)
    imports = []
    real = amk_io.from_amk
    monkeypatch.setattr(amk_io, "from_amk", lambda doc: imports.append(1) or real(doc))
    for path in SAMPLES:
        amk = json.loads(path.read_text())
        verdict = validate(amk)
        assert not imports, path.stem
        if path.stem.startswith("valid"):
            assert verdict.ok and verdict.safety == "safe_any_placement" and verdict.stats["tasks"] == len(amk["tasks"])
        else:
            assert not verdict.ok and verdict.safety == "unsafe" and verdict.violations  # (read: imported now)
            assert len(imports) == 1
            imports.clear()


def test_amk_documents_the_native_reader_leaves_to_the_import(native, monkeypatch):
    """What the import would change beyond regions (a task's own regions, a version written as a
    number, a meta that is no dict, carried regions of another shape) is left to it; an unknown
    major version is malformed."""
    base = json.loads((SAMPLES[0].parent / "valid_0288.json").read_text())
    edits = [lambda d: d["tasks"][3].update(regions=None),
             lambda d: d.update(ir_version=0),
             lambda d: d.update(meta=[["model", "x"]]),
             lambda d: d["meta"].update(crucible_regions=[["3", []]]),
             lambda d: d["meta"].update(crucible_regions={"3": {"buffer": 3}})]
    for edit in edits:
        amk = copy.deepcopy(base)
        edit(amk)
        assert native.judge(amk) is None
        _agree(native, amk, monkeypatch)
    amk = copy.deepcopy(base)
    amk["ir_version"] = "1.0.0"
    assert native.judge(amk) is None
    verdict = validate(amk)
    assert not verdict.ok and verdict.classes == ["malformed"] and "0.2.0" in verdict.violations[0]["message"]


def test_regions_carried_in_meta_are_read_natively_as_the_import_takes_them(native, monkeypatch):
    """Our own exports carry regions params cannot give in ``meta.crucible_regions``: an entry
    replaces a tile's own region, None leaves it to the params, an empty list means the whole
    buffer; verdicts equal the import's, and the native path answers for them."""
    # (GEMVs split into several tiles: a tile given the whole buffer then races with the others)
    wide = ModelConfig(hidden=32, layers=2, heads=4, kv_heads=2, head_dim=8, intermediate=64, vocab=32, max_seq=16)
    carrying = [amk_corpus.amk_lowering(wide, ScheduleConfig(num_sms=sms, gemv_tile=tile), position)
                for sms, tile, position in ((4, 4, 5), (2, 8, 3), (8, 16, 9))]
    assert all(doc["meta"].get("crucible_regions") and _split_tile(doc) for doc in carrying)
    answered = races = 0
    for doc in carrying[:4]:
        carried = doc["meta"]["crucible_regions"]
        tile = _split_tile(doc)
        some = next(iter(carried))
        edits = [lambda d: None,
                 lambda d: d["meta"].update(crucible_regions={}),
                 lambda d: d["meta"]["crucible_regions"].update({some: None}),
                 lambda d: d["meta"]["crucible_regions"].update({some: []}),
                 lambda d: d["meta"]["crucible_regions"].update({tile: []}),
                 lambda d: d["meta"]["crucible_regions"].update({tile: copy.deepcopy(carried[some])}),
                 lambda d: d["meta"]["crucible_regions"][some][0]["box"][-1].__setitem__(1, 10_000)]
        for n, edit in enumerate(edits):
            amk = copy.deepcopy(doc)
            edit(amk)
            verdict = _agree(native, amk, monkeypatch)[0]
            answered += native.judge(amk) is not None
            races += n == 4 and "waw" in verdict["classes"]
    assert answered >= 12 and races >= 2, (answered, races)


def _split_tile(doc: dict) -> str | None:
    """The id of a GEMV tile whose output other tiles write too, if there is one."""
    tiles = [t for t in doc["tasks"] if t["op"] == "GEMV_TILE"]
    for tile in tiles:
        if sum(other["outputs"] == tile["outputs"] for other in tiles) > 1:
            return str(tile["id"])
    return None


def test_tile_params_read_natively_give_the_imports_regions(native, monkeypatch):
    """GEMV and GEMM tiles (with and without rows) whose params are edited: in bounds, outside
    (tile_out_of_bounds, proven natively), empty, of other types; verdicts equal the import's."""
    base = json.loads((SAMPLES[0].parent / "valid_0137.json").read_text())
    gemm = copy.deepcopy(base)
    for task in gemm["tasks"]:
        if task["op"] == "GEMV_TILE":
            task["op"] = "GEMM_TILE"
            task["params"].update(M_tile=1, m_off=0)
    assert validate(gemm).ok and native.judge(gemm)
    values = [0, 1, 3, -1, 10_000, 2 ** 62, True, 1.0, None, "4"]
    proven_oob = 0
    for doc in (base, gemm):
        tiles = [i for i, task in enumerate(doc["tasks"]) if task["op"] in ("GEMV_TILE", "GEMM_TILE")]
        keys = ["n_off", "N_tile"] + (["m_off", "M_tile"] if doc is gemm else [])
        for n, (key, value) in enumerate((k, v) for k in keys for v in values):
            edited = copy.deepcopy(doc)
            edited["tasks"][tiles[n % len(tiles)]]["params"][key] = value
            pure = _agree(native, edited, monkeypatch)
            if native.judge(edited) is False and "tile_out_of_bounds" in pure[0]["classes"]:
                proven_oob += 1
    assert proven_oob >= 4
