"""A sweep on a real Ray cluster of several nodes on this machine: the same verdicts as the local
executor, run-wide limits that hold across nodes, and a lost node that loses and duplicates nothing.

The tests share one cluster per module, so they run in one pytest-xdist group (``--dist
loadgroup`` in pyproject.toml): two clusters at once would only compete for this machine's cores.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter

import pytest

from tests.executors.conftest import (PROBLEMS_ROOT, ROOT, cluster_env, harness_run, llm_args, records_of, scripted,
                                      verdicts)

SUITE = ROOT / "suites" / "kernelbench" / "test_kernelbench.py"

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray_cluster")]


def test_a_ray_sweep_gives_the_local_executors_verdicts(ray_cluster, llm_server, tmp_path):
    llm_server.responder = scripted()
    harness_run(tmp_path / "local", *llm_args(llm_server, samples=2))
    harness_run(tmp_path / "ray", *llm_args(llm_server, samples=2), "--executor", "ray", "--ray-address", ray_cluster.address)
    local, on_ray = records_of(tmp_path / "local"), records_of(tmp_path / "ray")
    assert verdicts(on_ray) == verdicts(local)
    assert {r["status"] for r in on_ray} == {"ok", "incorrect", "compile_error"}
    assert all(r["executor"]["name"] == "ray" and r["executor"]["node_id"] for r in on_ray)
    assert "executor" not in local[0]


def test_the_run_token_limit_holds_across_nodes(ray_cluster, llm_server, tmp_path):
    # Each problem alone would stay under 400 tokens for two calls and make a third (150 tokens
    # each): without a shared ledger, two nodes would spend 900 tokens.
    llm_server.responder = scripted(delay_s=1.0)
    harness_run(tmp_path / "ray", *llm_args(llm_server, samples=3), "--run-max-tokens", "400",
                "--executor", "ray", "--ray-address", ray_cluster.address)
    records = records_of(tmp_path / "ray")
    spent = sum(r["usage"].get("input_tokens", 0) + r["usage"].get("output_tokens", 0) for r in records)
    assert spent == 150 * len(llm_server.requests)  # every call the endpoint answered is in a record
    assert spent <= 400 + 150                        # at most one call over, as locally
    assert len({r["executor"]["node_id"] for r in records}) == 2
    stops = [(r.get("provenance") or {}).get("stopped") or r["reason"] for r in records]
    assert any("run token budget spent" in (text or "") for text in stops)


def _wait_for(condition, driver, timeout_s: float = 240.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if driver.poll() is not None:
            pytest.fail(f"the driver ended early: {driver.communicate()[0]}")
        assert time.monotonic() < deadline, "the tasks never reached the endpoint"
        time.sleep(0.1)


def test_the_pytest_plugin_runs_the_suite_on_ray_into_one_run_file(ray_cluster, tmp_path):
    done = subprocess.run([sys.executable, "-m", "pytest", str(SUITE), "--level", "1", "--kernelbench-root",
                           str(PROBLEMS_ROOT), "--no-timing", "--trials", "2", "--runs-dir", str(tmp_path / "runs"),
                           "--executor", "ray", "--ray-address", ray_cluster.address, "-n", "0", "-p", "no:cacheprovider"],
                          cwd=ROOT, env=cluster_env(), capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout and "L1: 2/2 correct" in done.stdout
    records = records_of(tmp_path / "runs")
    assert sorted(r["problem_id"] for r in records) == ["L1/1_Scale_ReLU", "L1/2_Row_Softmax"]
    assert all(r["executor"]["name"] == "ray" for r in records)


def test_resume_on_ray_appends_only_the_problems_the_run_file_lacks(ray_cluster, tmp_path):
    on_ray = ("--executor", "ray", "--ray-address", ray_cluster.address)
    harness_run(tmp_path / "runs", "--problem", "L1/1_*", *on_ray)
    resumed = harness_run(tmp_path / "runs", "--resume", *on_ray)
    assert "L1/1_Scale_ReLU: already recorded, skipped (--resume)" in resumed.stderr
    records = records_of(tmp_path / "runs")
    assert sorted(r["problem_id"] for r in records) == ["L1/1_Scale_ReLU", "L1/2_Row_Softmax"]
    assert len({r["run_id"] for r in records}) == 2


# A task that takes its own process down at every start stands in for a problem that brings its node
# down; the driver is the real RaySweep.
EVERY_START_DIES = """
import json, os, sys
import ray
from harness.executors.ray import RaySweep
from harness.judge.eval_setup import eval_options
from harness.problems.problem import load_problem
from harness.executors.runner import Runner

def dies(spec, problem, ledger):
    os._exit(1)

ray.init(address=sys.argv[1])
runner = Runner("reference", eval_options(timing=False, trials=1), sys.argv[2])
sweep = RaySweep(runner, max_retries=1)
sweep.task = ray.remote(dies).options(max_retries=1, num_cpus=1)
sweep.submit(load_problem(sys.argv[3], size="small", level=1))
problem, records = sweep.next_finished()
sweep.close()
print(json.dumps([r["status"] for r in records]))
"""


def test_a_problem_whose_every_start_loses_its_process_is_a_crashed_verdict(ray_cluster, tmp_path):
    problem = PROBLEMS_ROOT / "level1" / "1_Scale_ReLU.py"
    done = subprocess.run([sys.executable, "-c", EVERY_START_DIES, ray_cluster.address, str(tmp_path / "runs"), str(problem)],
                          cwd=ROOT, env=cluster_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    (record,) = records_of(tmp_path / "runs")
    assert record["status"] == "crashed" and not record["correct"]
    assert record["reason"].startswith("node_lost: each of 2 start(s) of this problem's task lost its Ray node")
    assert record["executor"] == {"name": "ray", "lost": True}


def test_a_node_lost_mid_run_loses_no_record_and_duplicates_none(ray_cluster, llm_server, tmp_path):
    llm_server.responder = scripted(delay_s=6.0)
    driver = harness_run(tmp_path / "ray", *llm_args(llm_server), "--executor", "ray",
                         "--ray-address", ray_cluster.address, wait=False)
    _wait_for(lambda: len(llm_server.requests) >= 2, driver)  # both problems are under way, one per node
    doomed = ray_cluster.list_all_nodes()[1]
    ray_cluster.remove_node(doomed, allow_graceful=False)
    ray_cluster.add_node(num_cpus=1, object_store_memory=80 << 20)
    output, _ = driver.communicate(timeout=400)
    assert driver.returncode == 0, output
    records = records_of(tmp_path / "ray")
    assert Counter(r["problem_id"] for r in records) == {"L1/1_Scale_ReLU": 1, "L1/2_Row_Softmax": 1}
    assert all(r["status"] == "ok" for r in records)
    restarted = [r for r in records if r["executor"]["task_start"] > 1]
    assert len(restarted) == 1 and restarted[0]["executor"]["node_id"] != doomed.node_id
    assert len(llm_server.requests) == 3  # the lost start's call was made again by the retry
