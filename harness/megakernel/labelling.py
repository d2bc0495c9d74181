"""Label the corpus: build each chunk, run the validator and the oracle on every schedule.

Chunks run in worker processes (one per core); each returns compact rows, never documents, so
nothing large crosses a process boundary. A disagreement carries its explanation: for a schedule
the validator rejects but the *sampled* oracle could not fault, the validator's witness is
replayed on the oracle's machine.
"""

from __future__ import annotations

import os
import time
import zlib
from concurrent.futures import ProcessPoolExecutor

from harness.megakernel import corpus, oracle
from harness.megakernel.validator import validate
from harness.megakernel.witness import witness_trace

MAX_STATES = 10_000
SAMPLED_RUNS = 48


def label_chunk(seed: int, size: int, chunk: int, max_states: int = MAX_STATES,
                runs: int = SAMPLED_RUNS) -> dict:
    items = corpus.build_chunk(seed, size, chunk)
    started = time.process_time()  # CPU time of this worker: the per-core figure
    verdicts = [validate(item.doc) for item in items]
    validate_s = time.process_time() - started
    rows, oracle_s = [], time.perf_counter()
    for item, verdict in zip(items, verdicts):
        truth = oracle.label(item.doc, max_states, runs, seed=zlib.crc32(item.id.encode()))
        rows.append(_row(item, verdict, truth))
    return {"chunk": chunk, "rows": rows, "validate_s": validate_s, "digest": corpus.digest(items),
            "oracle_s": time.perf_counter() - oracle_s}


def _row(item, verdict, truth) -> dict:
    row = {"id": item.id, "source": item.source, "cls": item.cls, "tasks": item.tasks,
           "accepted": verdict.ok, "classes": verdict.classes, "family": verdict.family,
           "safe": truth["safe"], "mode": truth["mode"], "states": truth["states"], "kinds": truth["kinds"]}
    if verdict.ok != truth["safe"]:
        row["explanation"] = explain(item.doc, verdict, truth)
        row["first_violation"] = (verdict.violations or truth["violations"] or [None])[0]
    return row


def explain(doc, verdict, truth) -> dict:
    """Why validator and oracle disagree, settled by replaying a witness on the oracle."""
    if verdict.ok:
        return {"resolved": False, "why": "validator accepted a schedule the oracle faulted "
                f"({truth['kinds']}); a validator bug", "oracle_witness": truth["violations"][:1]}
    for violation in verdict.violations:
        trace = witness_trace(doc, violation)
        seen = oracle.replay(doc, trace) if trace is not None else []
        if any(v["kind"] != "illegal_trace" for v in seen):
            return {"resolved": True, "why": f"the oracle was {truth['mode']} and missed it; replaying "
                    f"the validator's {violation['class']} witness on the oracle's machine shows "
                    f"{sorted({v['kind'] for v in seen})}", "trace": trace}
    return {"resolved": False, "why": f"the validator rejected ({verdict.classes}) and no witness "
            "replays to a fault; a false reject"}


def label_corpus(seed: int, size: int, workers: int | None = None) -> list[dict]:
    """Every chunk's result, in chunk order."""
    workers = workers or min(os.cpu_count() or 1, corpus.CHUNKS)
    args = [(seed, size, chunk) for chunk in range(corpus.CHUNKS)]
    if workers <= 1:
        return [label_chunk(*a) for a in args]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(label_chunk, *zip(*args)))
