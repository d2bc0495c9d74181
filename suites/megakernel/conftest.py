"""Session fixtures of the megakernel suite.

The suite's options and the once-per-run sharing of its parts between xdist workers are in
harness.megakernel.pytest_hooks (a plugin, so the xdist controller has them too); here are only
the fixtures that hand each part to the tests, and the skip when the named generator writes no schedules.
"""

from __future__ import annotations

import pytest

from harness.megakernel import corpus, suite
from harness.megakernel.pytest_hooks import shared_part as _shared
from harness.pytest_support import skip_reason


@pytest.fixture(scope="session", autouse=True)
def mk_applies(request):
    """The suite checks schedules: it runs with no --generator (CI) or one that writes schedules."""
    reason = skip_reason(request.config, "megakernel")
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def mk_settings(request) -> dict:
    get = request.config.getoption
    return {"seed": get("mk_seed", default=corpus.DEFAULT_SEED), "size": get("mk_size", default=corpus.DEFAULT_SIZE),
            "workers": get("mk_workers", default=None)}


@pytest.fixture(scope="session")
def mk_rows(request, mk_settings) -> list[dict]:
    s = mk_settings
    return _shared(request.config, "corpus", lambda out: suite.corpus_part(out, s["seed"], s["size"], s["workers"]))[1]


@pytest.fixture(scope="session")
def mk_throughput(request, mk_settings) -> dict:
    s = mk_settings
    return _shared(request.config, "throughput", lambda out: suite.throughput_part(out, s["seed"], s["size"]))[1]


@pytest.fixture(scope="session")
def mk_vm(request):
    return _shared(request.config, "vm", suite.vm_part)


@pytest.fixture(scope="session")
def mk_search(request):
    return _shared(request.config, "search", suite.search_part)[1]


@pytest.fixture(scope="session")
def mk_executor(request):
    return _shared(request.config, "executor", suite.executor_part)[1]

