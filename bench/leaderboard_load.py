"""How fast the leaderboard is at 100,000 records, against the targets of docs/LEADERBOARD.md:

    python bench/leaderboard_load.py [--records 100000] [--files 50] [--source-bytes 3000] [--no-browser]

Synthesises run files shaped like real ones (a candidate source of a few KB, a refinement
transcript, provenance, usage and timing intervals in every record, split into run and details
files as RunWriter splits them) in a temporary folder, then times: ``load_runs`` without details
(target 3 s), the app's load path cold and from its column cache, the rankings for each baseline,
the paper figures (target 20 s), and, in headless Chromium over the DevTools protocol, the app's
first render with warm caches (target 4 s) and each tab and baseline switch (target 1.5 s).

Each line gives wall time and CPU time (this process, or the app server and the browser for the
browser lines): on a shared machine the wall time grows with other jobs, so the load average is
printed before and after. The synthetic records are random; nothing here is a result.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.records.results import SCHEMA, RunWriter, details_path, run_file_name, split_details, utc_now  # noqa: E402

GENERATORS = [("reference", None), ("inductor", None), ("direct", "gpt-4o"), ("kforge", "o3"), ("mkevolve", "o3")]
STATUSES = ["ok"] * 6 + ["incorrect", "compile_error", "runtime_error", "timeout"]


def fake_source(rng: random.Random, size: int) -> str:
    body = "\n".join(f'    acc{i} = tl.load(x_ptr + offsets * {rng.randint(1, 9)}, mask=mask, other=0.0)  # "q"'
                     for i in range(size // 70))
    return f"import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef kernel(x_ptr, n):\n{body}\n"


def fake_record(rng: random.Random, run_id: str, generator: str, model, index: int, source_bytes: int) -> dict:
    level = 1 + index % 3
    status = rng.choice(STATUSES)
    correct = status == "ok"
    speedup = rng.lognormvariate(0.0, 0.6) if correct else None
    flags = ["timer_mismatch"] if correct and rng.random() < 0.02 else []
    return {
        "run_id": run_id, "problem_id": f"L{level}/{index % 100 + 1}_Problem{index % 100 + 1}",
        "suite": "kernelbench", "level": level, "problem": f"{index % 100 + 1}_Problem",
        "generator": generator, "provider": "openai" if model else None, "model": model,
        "attempt": index // 300, "candidate_sha": f"{rng.getrandbits(64):016x}", "status": status,
        "correct": correct, "reason": "" if correct else "max abs error 0.5 at [0, 3]", "flags": flags,
        "remarks": [], "device": "cuda", "precision": "fp32", "size": "full",
        "candidate_ms": 1.0 / speedup if speedup else None, "candidate_ms_iqr": 0.01, "candidate_ms_ci": [0.9, 1.1],
        "candidate_n": 100, "eager_ms": 1.0, "compile_ms": 0.8, "speedup": speedup,
        "eager_ms_ci": [0.97, 1.03], "compile_ms_ci": [0.78, 0.82],
        "speedup_ci": [0.95 * speedup, 1.05 * speedup] if speedup else None,
        "speedup_compile_ci": [0.76 * speedup, 0.84 * speedup] if speedup else None, "speedup_n": 20,
        "speed_verdict": None if not speedup else "faster" if speedup > 1.06 else "slower" if speedup < 0.94
        else "indistinguishable",
        "excluded": "degenerate by construction" if index % 100 == 36 else None,
        "speedup_compile": 0.8 * speedup if speedup else None, "flops": 1e9, "bytes": 4e8,
        "sol_ms": 0.05, "sol_fraction": 0.05 * speedup if speedup else None, "degenerate": False, "weights_loaded": 2,
        "usage": {"input_tokens": rng.randint(500, 5000), "cached_input_tokens": 0, "output_tokens": rng.randint(200, 3000),
                  "reasoning_tokens": 0, "cost_usd": rng.random() / 20, "estimated": False},
        "candidate_source": fake_source(rng, source_bytes),
        "transcript": [{"step": s, "verdict": rng.choice(["compile_error", "incorrect", "ok"]),
                        "feedback": "error: " + "x" * 200} for s in range(3)],
        "provenance": {"prompt_sha": "abc123", "temperature": 0.7, "submodules": ["load", "compute"]},
        "checks": {"trials": 5, "max_abs_err": 1e-6, "max_rel_err": 1e-5, "mismatch": None},
        "time": utc_now(), "elapsed_s": rng.random() * 10,
    }


def synthesise(folder: Path, records: int, files: int, source_bytes: int) -> tuple[int, int]:
    """Write ``records`` records over ``files`` run files; returns the bytes of run and details files."""
    rng, per_file, written, detailed = random.Random(0), records // files, 0, 0
    for number in range(files):
        generator, model = GENERATORS[number % len(GENERATORS)]
        run_id = f"20250101T{number:06d}Z-bench"
        path = folder / "runs" / run_file_name(run_id, "kernelbench", generator)
        header = {"run_id": run_id, "provenance": {"device": "NVIDIA H200" if number % 2 else "NVIDIA A100",
                                                   "git_commit": f"{number:040x}"},
                  "config": {"suite": "kernelbench", "generator": generator, "precision": "fp32", "size": "full",
                             "timer": "cuda_events+device_sync"}}
        RunWriter(path, header)  # the header exactly as a real run writes it
        lines, details = [], []
        for i in range(per_file):  # split as RunWriter.append splits: bulky fields to the details file
            light, bulky = split_details(fake_record(rng, run_id, generator, model, i, source_bytes))
            lines.append(json.dumps({"type": "record", **light}))
            details += [json.dumps(bulky)] if bulky else []
        with open(details_path(path), "a") as handle:  # one write instead of 2,000 fsyncs; the same bytes
            handle.write("\n".join(details) + "\n")
        with open(path, "a") as handle:
            handle.write("\n".join(lines) + "\n")
        written += path.stat().st_size
        detailed += details_path(path).stat().st_size
    assert SCHEMA.startswith("crucible.run/")
    return written, detailed


def load_average() -> str:
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"


def timed(label: str, function, *args, target: float | None = None, results: list | None = None):
    """Wall time (what a reader waits) and this process's CPU time (all threads)."""
    started, cpu = time.perf_counter(), time.process_time()
    value = function(*args)
    seconds = time.perf_counter() - started
    report(label, seconds, time.process_time() - cpu, target, results)
    return value, seconds


def report(label: str, wall: float, cpu: float, target: float | None, results: list | None) -> None:
    verdict = "" if target is None else f"  target {target:g} s: {'met' if wall <= target else 'MISSED'}"
    print(f"{label:<52} {wall:7.2f} s wall {cpu:7.2f} s CPU{verdict}", flush=True)
    if results is not None and target is not None:
        results.append((label, wall, target))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--source-bytes", type=int, default=3000)
    parser.add_argument("--no-browser", action="store_true", help="skip the headless-Chromium timings")
    parser.add_argument("--no-figures", action="store_true", help="skip the paper figures")
    args = parser.parse_args()
    import warnings

    from harness.records.results import load_runs
    from leaderboard import data, figures, tables

    results: list = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        size, detail_size = synthesise(folder, args.records, args.files, args.source_bytes)
        print(f"{args.records:,} records in {args.files} run files, {size / 1e6:.0f} MB "
              f"(+ {detail_size / 1e6:.0f} MB of sources and transcripts in their details files); {load_average()}")
        os.environ["CRUCIBLE_CACHE"] = str(folder / "cache")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the synthetic files are clean: any warning is a bug
            frame, _ = timed("load_runs, no details", load_runs, folder / "runs", target=3.0, results=results)
        assert len(frame) == args.records
        loaded, _ = timed("load_frame, cold (no column cache)", data.load_frame, folder, False)
        timed("load_frame, first load (fills the column cache)", data.load_frame, folder)
        timed("load_frame, from the column cache", data.load_frame, folder)
        for baseline in ("eager", "compile", "best"):
            timed(f"rankings, every board, against {baseline}", tables.leaderboard, loaded.frame, baseline)
        timed("rankings with bootstrap intervals", tables.leaderboard, loaded.frame, "eager", True)
        timed("generator x problem grid", tables.problem_grid, loaded.frame)
        if not args.no_figures:
            timed("paper figures (PNG + PDF)", lambda: figures.generate(folder, folder / "figures", log=lambda m: None),
                  target=20.0, results=results)
        if not args.no_browser:
            browser_timings(folder, results)
        print(load_average())
        for label, wall, target in results:
            print(f"RESULT {label}: {wall:.2f} s (target {target:g} s, {'met' if wall <= target else 'MISSED'})")
        return 0 if all(wall <= target for _, wall, target in results) else 1


TABLES = "document.querySelectorAll('table').length > 0"
RUN = "Number((document.body.innerText.match(/[(]run ([0-9]+)[)]/) || [0, 0])[1])"  # the app's own run count
TAB_MARKERS = {
    "Problems": "document.querySelectorAll('.vega-embed').length > 0",
    "Runs": "document.querySelector('[data-testid=\"stJson\"]')",
    "Charts": "document.querySelectorAll('.vega-embed').length > 0",
    "Flagged": "document.querySelector('[data-testid=\"stDataFrame\"]')",
    "Rankings": TABLES,
}


def browser_timings(folder: Path, results: list) -> None:
    """The app in headless Chromium: first render with warm caches, each tab, a baseline switch.
    Each wait ends when the app has finished the run the action started (its run count moved on),
    the view's marker is on the page and the status widget is gone."""
    from leaderboard import cdp, screenshots

    binary = screenshots.find_browser()
    if binary is None:
        print("no Chromium: browser timings skipped (Debian: apt-get install chromium)")
        return
    with screenshots.serve_process(folder, seconds=180) as (url, server), cdp.Browser(binary) as page:
        page.open(url)
        page.wait_for(f"{TABLES} && {RUN} >= 1", 180, settle=0.3)  # a first visit loads and caches the run files
        for tab in TAB_MARKERS:  # and computes each tab once
            act(page, lambda: page.click_text("[role=tab]", tab), TAB_MARKERS[tab], 180)
        for baseline in ("compile", "best", "eager"):
            act(page, lambda: page.click_text("[data-testid=stRadio] label", baseline), TABLES, 180)
        watched = [server.pid, page.pid]
        clock = cpu_seconds(watched)
        page.open(url + "?")  # a new session over warm caches: what a visitor waits for
        wall = page.wait_for(f"{TABLES} && {RUN} >= 1", 60, settle=0.3)
        report(f"browser: first render, warm{served(page)}", wall, cpu_seconds(watched) - clock, 4.0, results)
        for tab in TAB_MARKERS:
            clock = cpu_seconds(watched)
            wall = act(page, lambda: page.click_text("[role=tab]", tab), TAB_MARKERS[tab])
            report(f"browser: switch to the {tab} tab{served(page)}", wall, cpu_seconds(watched) - clock, 1.5, results)
        for baseline in ("compile", "best", "eager"):
            clock = cpu_seconds(watched)
            wall = act(page, lambda: page.click_text("[data-testid=stRadio] label", baseline), TABLES)
            report(f"browser: baseline switch to {baseline}{served(page)}", wall, cpu_seconds(watched) - clock, 1.5,
                   results)


def served(page) -> str:
    """The app's own time for the run (its last line), to tell server from browser time."""
    return f" (app {page.evaluate(COMPUTED):.2f} s)"


COMPUTED = "Number((document.body.innerText.match(/Page computed in ([0-9.]+) s/) || [0, -1])[1])"


def act(page, action, marker: str, timeout: float = 60) -> float:
    """Seconds from ``action`` until the app's next run has rendered ``marker``."""
    before = page.evaluate(RUN)
    started = time.perf_counter()
    action()
    page.wait_for(f"{RUN} > {before} && {marker}", timeout)
    return time.perf_counter() - started


def cpu_seconds(roots: list[int]) -> float:
    """User + system CPU seconds of the processes under ``roots`` (Linux /proc; 0 elsewhere)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parents, used = {}, {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.parent.name)
        parents[pid], used[pid] = int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks
    total = 0.0
    for pid in used:
        walk = pid
        while walk and walk not in roots:
            walk = parents.get(walk, 0)
        total += used[pid] if walk else 0.0
    return total


if __name__ == "__main__":
    raise SystemExit(main())
