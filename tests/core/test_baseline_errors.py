"""A baseline that fails (torch.compile's inductor erring in its compile subprocess, say) leaves its
whole cause in the record, in the details file, not only the remark's first 200 characters."""

from harness.judge import evaluate as evaluate_module
from harness.judge.evaluate import EvalCache, EvalOptions, _bounded_reason, evaluate
from harness.records.results import RunWriter, load_records


def test_a_long_reason_keeps_its_head_and_its_innermost_cause():
    reason = "InductorError in first call: SubprocException" + "x" * 10_000 + "RuntimeError: the real cause"
    kept = _bounded_reason(reason, "worker said goodbye")
    assert kept.startswith("InductorError in first call") and kept.endswith("worker said goodbye")
    assert "RuntimeError: the real cause" in kept and len(kept) < 4_100
    assert _bounded_reason("short") == "short"


def test_a_failed_baseline_is_a_remark_and_its_whole_reason_reaches_the_details_file(tmp_path, scale_relu, monkeypatch):
    real_check = evaluate_module._check_baseline
    cause = "InductorError: SubprocException: " + "frame\n" * 2_000 + "ptxas fatal: the innermost cause"

    def compile_fails(worker, kind, env, opts, cache):
        if kind == "eager":
            return real_check(worker, kind, env, opts, cache)
        return {"status": "runtime_error", "reason": cause, "worker_output": ""}

    monkeypatch.setattr(evaluate_module, "_check_baseline", compile_fails)
    opts = EvalOptions(device="cpu", trials=2, compile_baseline="on")
    record = evaluate(scale_relu, scale_relu.source + "\n\nModelNew = Model\n", opts, EvalCache(), baseline=True)
    assert record["status"] == "ok" and record["eager_ms"] and record["compile_ms"] is None
    assert [r[:40] for r in record["remarks"] if "baseline_failed" in r] == ["compile_baseline_failed: runtime_error: "]
    assert list(record["baseline_errors"]) == ["compile"]
    path = tmp_path / "run.jsonl"
    RunWriter(path, {"run_id": "r"}).append(record)
    assert "baseline_errors" not in path.read_text().splitlines()[1]  # bulky: in the details file
    (loaded,) = load_records([path])
    assert loaded["baseline_errors"]["compile"].endswith("ptxas fatal: the innermost cause")


def test_a_baseline_failing_in_its_worker_keeps_the_tracebacks_innermost_cause(scale_relu, monkeypatch):
    # The worker cuts its reason at 500 characters; an inductor SubprocException puts the real cause
    # at the end of a long message, so the record must take it from the worker's traceback.
    failing = scale_relu.source + (
        "\n\nclass ModelNew(Model):\n"
        "    def forward(self, *args):\n"
        "        raise RuntimeError('SubprocException: ' + 'frame\\n' * 400 + 'ptxas fatal: the innermost cause')\n")
    real_source = evaluate_module.baseline_source
    monkeypatch.setattr(evaluate_module, "baseline_source",
                        lambda problem, kind: failing if kind == "compile" else real_source(problem, kind))
    opts = EvalOptions(device="cpu", trials=2, compile_baseline="on")
    record = evaluate(scale_relu, scale_relu.source + "\n\nModelNew = Model\n", opts, EvalCache(), baseline=True)
    assert record["status"] == "ok" and record["compile_ms"] is None
    kept = record["baseline_errors"]["compile"]
    assert kept.startswith("RuntimeError in first call: SubprocException")
    assert "ptxas fatal: the innermost cause" in kept.split("--- traceback (tail) ---")[1]
