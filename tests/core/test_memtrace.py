"""The opt-in GPU memory trace never changes a verdict: off by default, and on a machine without
CUDA it writes an error line instead of raising."""

import json


def test_trace_is_off_unless_asked(monkeypatch):
    from harness import memtrace

    monkeypatch.delenv(memtrace.ENV, raising=False)
    assert not memtrace.enabled()
    memtrace.record("call", "first call", 1)  # nothing to write to: a no-op


def test_trace_without_cuda_writes_the_error_and_does_not_raise(monkeypatch, tmp_path):
    import torch

    from harness import memtrace

    path = tmp_path / "trace.ndjson"
    monkeypatch.setenv(memtrace.ENV, str(path))
    assert memtrace.enabled()
    memtrace.record("time", "timing", 123)
    row = json.loads(path.read_text().splitlines()[-1])
    assert row["op"] == "time" and row["phase"] == "timing"
    if torch.cuda.is_available():
        assert "judge_reserved_gib" in row and "processes_gib" in row
    else:
        assert "error" in row


def test_process_table_is_parsed_from_torch_text():
    from harness.memtrace import _processes

    class FakeTorch:
        class cuda:
            @staticmethod
            def list_gpu_processes():
                return "GPU:0\nprocess     801 uses    58071.000 MB GPU memory\nprocess    1016 uses      520.000 MB GPU memory"

    assert _processes(FakeTorch) == {"801": 56.71, "1016": 0.51}
