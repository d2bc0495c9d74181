"""The opt-in GPU memory trace never changes a verdict: off by default, and on a machine without
CUDA it writes an error line instead of raising."""

import json


def test_trace_is_off_unless_asked(monkeypatch):
    from harness.judge import memtrace

    monkeypatch.delenv(memtrace.ENV, raising=False)
    assert not memtrace.enabled()
    memtrace.record("call", "first call", 1)  # nothing to write to: a no-op


def test_trace_without_cuda_writes_the_error_and_does_not_raise(monkeypatch, tmp_path):
    import torch

    from harness.judge import memtrace

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
    from harness.judge.memtrace import _processes

    class FakeTorch:
        class cuda:
            @staticmethod
            def list_gpu_processes():
                return "GPU:0\nprocess     801 uses    58071.000 MB GPU memory\nprocess    1016 uses      520.000 MB GPU memory"

    assert _processes(FakeTorch) == {"801": 56.71, "1016": 0.51}


def test_timed_calls_that_called_cudamalloc_are_counted_after_warmup_only():
    from harness.judge.timing import TimingOutcome, _account

    outcome = TimingOutcome()
    _account(outcome, {"device_allocs": [1, 1, 1]}, [1.0, 1.0, 1.0], 10.0, record=False)  # warm-up
    _account(outcome, {"device_allocs": [0, 2, "x", 1]}, [1.0] * 4, 10.0, record=True)
    _account(outcome, {}, [1.0], 10.0, record=True)  # a CPU reply has no counts
    assert outcome.calls_with_malloc == 2 and outcome.calls_with_retry == 0
    # a retry counts only on a call that also allocated
    _account(outcome, {"device_allocs": [1, 0, 1], "alloc_retries": [1, 1, 0]}, [1.0] * 3, 10.0, record=True)
    assert outcome.calls_with_malloc == 4 and outcome.calls_with_retry == 1


def test_malloc_remark_names_who_and_how_often():
    from harness.judge.evaluate import _note_mallocs

    record = {"remarks": []}
    _note_mallocs(record, "eager", 0, 10)
    assert record["remarks"] == []
    _note_mallocs(record, "eager", 7, 10, 2)
    assert record["remarks"] == ["cuda_malloc_in_timed_calls: eager: 7 of 10 timed calls allocated new device memory "
                                 "inside the window, 2 of them after an out-of-memory retry"]


def test_allocator_counts_read_the_allocator_statistics():
    from harness.judge.worker.handlers import allocator_counts

    class FakeTorch:
        class cuda:
            stats = {"num_device_alloc": 5, "num_device_free": 2, "num_alloc_retries": 1}

            @classmethod
            def memory_stats(cls):
                return cls.stats

    assert allocator_counts(FakeTorch) == (5, 2, 1)
    FakeTorch.cuda.stats = {"segment.all.allocated": 3, "segment.all.freed": 1}
    assert allocator_counts(FakeTorch) == (3, 1, -1)
    FakeTorch.cuda.stats = {}
    assert allocator_counts(FakeTorch) == (-1, -1, -1)


def test_trace_fields_carry_a_timed_batchs_times_allocations_and_idle_gap():
    from harness.judge.workers import _trace_fields

    reply = {"times_ms": [1.5, 1.6], "device_allocs": [0, 1], "device_frees": [0, 0], "alloc_retries": [0, 0]}
    fields = _trace_fields({"op": "time"}, reply, started=10.25, wall_s=0.004, last_reply_at=10.0)
    assert fields == {"wall_ms": 4.0, "idle_before_ms": 250.0, "times_ms": [1.5, 1.6], "device_allocs": [0, 1],
                      "device_frees": [0, 0], "alloc_retries": [0, 0]}
    first = _trace_fields({"op": "call"}, {"outputs": []}, started=1.0, wall_s=0.5, last_reply_at=None)
    assert first == {"wall_ms": 500.0}

