"""A real Ray cluster of several nodes on this machine (loopback only), a scripted LLM endpoint that
answers per problem, and a way to run ``python -m harness run`` against them.

Every node is a separate set of Ray processes (its own raylet and workers), so losing one is as
real as losing a machine. The head node has no CPU slots: problems run on the worker nodes only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS_ROOT = ROOT / "tests" / "fixtures" / "problems_root"
SOURCES = {name: (PROBLEMS_ROOT / "level1" / f"{name}.py").read_text() for name in ("1_Scale_ReLU", "2_Row_Softmax")}

# Ray binds to loopback only with clusters "off" for this platform (ray_constants.ENABLE_RAY_CLUSTER);
# the nodes are still separate processes with their own raylets.
CLUSTER_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "CRUCIBLE_LLM_CACHE": "off", "OPENAI_API_KEY": "test-key",
               "TRITON_INTERPRET": "1", "RAY_USAGE_STATS_ENABLED": "0"}


@pytest.fixture(scope="module")
def ray_cluster():
    with pytest.MonkeyPatch.context() as patch:
        for name, value in CLUSTER_ENV.items():
            patch.setenv(name, value)
        patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        pytest.importorskip("ray")  # after the settings above: Ray reads them as it is imported
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args=_node_args(num_cpus=0, include_dashboard=False))
        for _ in range(2):
            cluster.add_node(**_node_args(num_cpus=1))
        cluster.wait_for_nodes()
        try:
            yield cluster
        finally:
            cluster.shutdown()


def _node_args(**args) -> dict:
    return {"object_store_memory": 80 << 20, **args}


@pytest.fixture
def llm_server():
    pytest.importorskip("openai")
    from tests.llm.scripted_server import ScriptedServer

    server = ScriptedServer().start()
    yield server
    server.stop()


def candidate_for(request: dict) -> str:
    """The scripted model: sample 0 answers the problem's own code (correct), sample 1 a wrong
    Scale_ReLU or a Softmax that does not compile, so verdicts differ between records."""
    user = request["messages"][-1]["content"]
    name = "2_Row_Softmax" if "softmax" in user else "1_Scale_ReLU"
    if request.get("seed", 0) % 2 == 0:
        return SOURCES[name] + "\n\nclass ModelNew(Model):\n    pass\n"
    if name == "1_Scale_ReLU":
        return SOURCES[name] + "\n\nclass ModelNew(Model):\n    def forward(self, x):\n        return super().forward(x) * 1.5\n"
    return "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x)\n        return x\n"


def scripted(delay_s: float = 0.0, prompt_tokens: int = 100, completion_tokens: int = 50):
    from tests.llm.scripted_server import Scripted, completion

    def respond(request: dict):
        text = f"Here is the kernel.\n\n```python\n{candidate_for(request)}```\n"
        return Scripted(body=completion(text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens),
                        delay_s=delay_s)

    return respond


def harness_run(runs_dir: Path, *extra: str, timeout: int = 400, wait: bool = True):
    """``python -m harness run`` over the two fixture problems at small size, correctness only."""
    args = [sys.executable, "-m", "harness", "run", "--level", "1", "--kernelbench-root", str(PROBLEMS_ROOT),
            "--no-timing", "--trials", "2", "--runs-dir", str(runs_dir), *extra]
    env = cluster_env()
    if not wait:
        return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def cluster_env() -> dict:
    """A driver's environment: the cluster's settings, and this checkout first on the path."""
    return {**os.environ, **CLUSTER_ENV, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def llm_args(server, samples: int = 1) -> list[str]:
    return ["--generator", "direct", "--provider", "openai", "--llm-base-url", server.base_url,
            "--llm-model", "test-model", "--samples", str(samples)]


def records_of(runs_dir: Path) -> list[dict]:
    (path,) = sorted(Path(runs_dir).glob("*.jsonl"))
    return [line for line in map(json.loads, path.read_text().splitlines()) if line["type"] == "record"]


def verdicts(records: list[dict]) -> list[tuple]:
    return sorted((r["problem_id"], r["attempt"], r["status"], r["correct"]) for r in records)
