"""Crucible's pytest plugin: ``pytest suites/ --generator NAME [--level ...] [--device cuda] ...``.

Hooks and fixtures only; the work is in harness.executors.runner. One test per problem, with ids like
``L2/23_Conv3d_GroupNorm_Mean``; a test passes when the generator's best candidate is correct.
Under pytest-xdist every worker appends to the same run file, and on CUDA each worker takes its
own GPU (workers beyond the GPU count queue on a per-GPU lock, so no two timings share a GPU).
"""

from __future__ import annotations

import pytest

from harness import pytest_support as support

# The megakernel suite's options and controller-side hooks (see that module for why not a conftest).
pytest_plugins = ["harness.megakernel.pytest_hooks"]


def pytest_addoption(parser):
    support.add_options(parser.getgroup("crucible", "Crucible kernel benchmark"))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU; skipped when none is visible")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    config.addinivalue_line("markers", "bench: prints performance figures; run with -m bench")
    if not hasattr(config, "workerinput"):
        support.check_executor(config)
        config.stash[support.RUN_ID] = support.new_run_id()


def pytest_configure_node(node):
    """xdist controller: every worker writes the same run."""
    node.workerinput["crucible_run_id"] = node.config.stash[support.RUN_ID]


def pytest_generate_tests(metafunc):
    if "kernelbench_case" in metafunc.fixturenames:
        reason = support.skip_reason(metafunc.config, "kernelbench")
        if reason:
            metafunc.parametrize("kernelbench_case", [pytest.param(None, marks=pytest.mark.skip(reason=reason))],
                                 ids=["not-for-this-generator"])
            return
        cases = support.selected_cases(metafunc.config)
        metafunc.parametrize("kernelbench_case", cases, ids=[case.id for case in cases])


def pytest_collection_modifyitems(config, items):
    if support.gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; none is visible (CI has none)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """An endpoint that cannot serve the run (key refused, model missing, server unreachable) ends
    the session with the fix, rather than failing every remaining problem the same way."""
    from harness.llm.base import EndpointUnusable

    try:
        return (yield)
    except EndpointUnusable as error:
        message = f"crucible: {error}"
        if not hasattr(item.config, "workerinput"):
            pytest.exit(message, returncode=pytest.ExitCode.INTERRUPTED)  # keeps the summaries
    # Under pytest-xdist an exit reads as a crashed worker ("keyboard-interrupt") and the message
    # is lost; a stop request travels to the controller, which ends the session with it, and the
    # failure shows it beside the problem.
    item.session.shouldstop = message
    pytest.fail(message, pytrace=False)


@pytest.fixture(scope="session")
def crucible_runner(request):
    """The session's Runner: generator, evaluation options, run file."""
    runner = support.make_runner(request.config)
    if hasattr(runner, "close"):  # --executor ray: tasks still under way end with the session
        request.addfinalizer(runner.close)
    return runner


@pytest.fixture
def crucible_problem(kernelbench_case, request):
    return support.load_case(kernelbench_case, request.config)


def pytest_terminal_summary(terminalreporter, config):
    if hasattr(config, "workerinput"):
        return
    for line in support.summary_lines(config):
        terminalreporter.write_line(line)
