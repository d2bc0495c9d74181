"""Megakernel schedules: format, lowering, static validator, exact oracle, corpus, reference VM.

A schedule is a task DAG over buffers with monotonic counters and per-SM queues (see
docs/MEGAKERNEL_SUITE.md). Importing this package is cheap: torch is imported only by ``vm`` and
``llama_ref``.
"""
