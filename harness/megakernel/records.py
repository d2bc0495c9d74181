"""Run records (``results/runs/*_megakernel_*.jsonl``) and ``results/megakernel/summary.json``."""

from __future__ import annotations

import json
import os
import platform
import socket
import sys
from pathlib import Path

import harness
from harness.judge.device import git_commit, git_dirty
from harness.records.results import RunWriter, new_run_id, run_file_name, utc_now

SUMMARY_SCHEMA = "crucible.megakernel.summary/1.0"


def provenance() -> dict:
    try:
        import torch
        torch_version = torch.__version__
    except ImportError:
        torch_version = None
    return {"device": platform.processor() or platform.machine(), "device_kind": "cpu",
            "python": sys.version.split()[0], "torch": torch_version, "harness": harness.__version__,
            "git_commit": git_commit(), "git_dirty": git_dirty(), "hostname": socket.gethostname(),
            "cpus": os.cpu_count()}


def write_run(summary: dict, runs_dir: str | os.PathLike) -> Path:
    """One run file: a record per corpus class, per VM lowering, throughput, search and summary."""
    run_id = summary["run_id"]
    path = Path(runs_dir) / run_file_name(run_id, "megakernel", "validator")
    header = {"run_id": run_id, "provenance": summary["provenance"],
              "config": {"suite": "megakernel", "generator": "validator", "device": "cpu", "precision": "fp32",
                         "seeds": f"public:{summary.get('corpus', {}).get('seed')}"}}
    writer = RunWriter(path, header=header)
    for record in _records(summary):
        writer.append({"run_id": run_id, "suite": "megakernel", "generator": "validator", "device": "cpu",
                       "precision": "fp32", "time": utc_now(), **record})
    return path


def _records(summary: dict) -> list[dict]:
    records = []
    for row in summary.get("per_class", []):
        fine = row["false_accept"] == 0 and row["false_reject"] == 0
        records.append({"problem_id": f"MK/corpus/{row['class']}", "problem": row["class"],
                        "status": "ok" if fine else "incorrect", "correct": fine,
                        "confusion": {k: row[k] for k in ("true_reject", "true_accept", "false_reject", "false_accept")},
                        "per_class": row})
    for case in summary.get("vm", {}).get("cases", []):
        records.append({"problem_id": f"MK/lowering/{case['model']}/{case['schedule']}", "problem": case["schedule"],
                        "status": "ok" if case["ok"] else "incorrect", "correct": case["ok"],
                        "vm_max_abs_err": case["max_abs_err"], "checks": case})
    if "throughput" in summary:
        t = summary["throughput"]
        records.append({"problem_id": "MK/throughput/small", "status": "ok", "correct": True,
                        "throughput_per_s": t.get("small_per_s"), "checks": t})
        if "largest" in t:
            records.append({"problem_id": "MK/throughput/largest", "status": "ok", "correct": t["largest"]["accepted"],
                            "elapsed_s": t["largest"]["seconds"], "checks": t["largest"]})
    if "search" in summary:
        s = summary["search"]
        records.append({"problem_id": f"MK/search/{s['model']}", "status": "ok" if s["kept"] else "incorrect",
                        "correct": bool(s["kept"]), "checks": s})
    if "confusion" in summary:
        c = summary["confusion"]["all"]
        records.append({"problem_id": "MK/summary", "status": "ok" if c["false_accept"] == 0 else "incorrect",
                        "correct": c["false_accept"] == 0, "confusion": c,
                        "throughput_per_s": summary.get("throughput", {}).get("small_per_s"),
                        "vm_max_abs_err": summary.get("vm", {}).get("max_abs_err")})
    return records


def write_summary(summary: dict, path: str | os.PathLike) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(summary, indent=1, default=str))
    os.replace(tmp, path)  # readers never see half a file
    return path


def new_summary() -> dict:
    return {"schema": SUMMARY_SCHEMA, "created": utc_now(), "run_id": new_run_id(), "provenance": provenance(),
            "anchor": {"name": "AutoMegaKernel (arXiv 2606.09682)", "schedules": 7160, "unsafe": 6091,
                       "false_accepts": 0, "false_rejects_vs_own_oracle": 692, "validated_per_s": 5000}}
