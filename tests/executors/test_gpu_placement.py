"""A task that Ray gives one GPU (as CUDA_VISIBLE_DEVICES) judges on that GPU and locks that GPU."""

from __future__ import annotations

import shutil

from harness.judge.evaluate import EvalOptions
from harness.executors.ray_task import _here
from harness.judge.gpu_lock import physical_gpu
from harness.judge.workers import WorkerLimits, WorkerSession


def _worker_env(device: str, gpu_index=None) -> dict:
    session = WorkerSession(device, WorkerLimits(), gpu_index)
    try:
        return session._environment("/nowhere")
    finally:
        shutil.rmtree(session.workdir, ignore_errors=True)


def test_a_cuda_worker_sees_the_gpus_its_judge_sees(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    assert _worker_env("cuda", 0)["CUDA_VISIBLE_DEVICES"] == "3"


def test_a_cpu_worker_still_sees_no_gpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    assert _worker_env("cpu")["CUDA_VISIBLE_DEVICES"] == ""


def test_the_gpu_lock_names_the_physical_gpu(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,5")
    assert (physical_gpu(0), physical_gpu(1)) == ("2", "5")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert physical_gpu(1) == "1"


def test_a_ray_task_judges_on_the_one_device_it_sees():
    assert _here(EvalOptions(device="cuda", gpu_index=3)).gpu_index == 0
    assert _here(EvalOptions(device="cpu")).gpu_index is None
