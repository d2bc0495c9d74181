"""The native import leaves its containers out of the cyclic GC (harness/megakernel/_mkfast.c,
``untrack_region`` says why: the speed of large imports in a process with a large heap). What makes
that safe is pinned here: the import builds no reference cycle, so reference counting alone frees
every container when the document goes; and ``copy.deepcopy`` of an imported document, for code
that will build cycles through it, is tracked again throughout."""

import copy
import gc
import json
import tracemalloc
import weakref
from pathlib import Path

import pytest

from harness.megakernel import fastpath
from harness.megakernel.amk_io import normalise

SAMPLE = Path(__file__).parent / "fixtures" / "amk_samples" / "valid_large_0001.json"

pytestmark = pytest.mark.skipif(fastpath.native is None, reason="the native fast path is not built (pure Python: "
                                "nothing is untracked)")


def _containers(value, path=()):
    """(container, its path) for every list and dict under ``value``; fails on a cycle."""
    if isinstance(value, (list, dict)):
        assert id(value) not in path, "the imported document holds a reference cycle"
        yield value, path
        for item in value.values() if isinstance(value, dict) else value:
            yield from _containers(item, path + (id(value),))


def test_the_import_untracks_its_own_containers_and_builds_no_cycle():
    amk = json.loads(SAMPLE.read_text())
    doc = normalise(amk)
    tasks = doc["tasks"]
    assert not any(gc.is_tracked(task) for task in tasks)
    tiled = [task for task in tasks if "regions" in task]
    assert tiled and not any(gc.is_tracked(task["regions"]) or gc.is_tracked(task["regions"][0]["box"])
                             for task in tiled)
    seen = list(_containers(tasks))  # (a depth-first walk that fails on any path back to a container)
    assert len(seen) > len(tasks)


def test_dropping_imported_documents_frees_them_by_reference_counting_alone():
    amk = json.loads(SAMPLE.read_text())
    gc.disable()  # (only reference counting may free them here)
    try:
        normalise(amk)
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            normalise(amk)
        grown = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
    finally:
        gc.enable()
    one = len(json.dumps(amk))  # (an import is of the order of its JSON text; 200 leaked ones would be far more)
    assert grown < one, f"{grown} bytes kept after 200 imports were dropped"


def test_a_deep_copy_of_an_imported_document_is_tracked_again_for_code_that_builds_cycles():
    doc = copy.deepcopy(normalise(json.loads(SAMPLE.read_text())))
    task = next(task for task in doc["tasks"] if "regions" in task)
    assert gc.is_tracked(task) and gc.is_tracked(task["regions"]) and gc.is_tracked(task["regions"][0]["box"])
    task["inputs"].append(task)  # a cycle through the copy is then collected like any other
    class Marker:
        pass

    marker = Marker()
    task["marker"] = marker
    gone = weakref.ref(marker)
    del doc, task, marker
    gc.collect()
    assert gone() is None
