"""Megakernel suite figures in one table: validator throughput, oracle cost, VM agreement.

    python bench/megakernel_bench.py [--size 10400] [--workers 2] [--skip-corpus]

Everything here runs on the CPU (the suite has no GPU path: the reference VM is fp32 PyTorch on
the CPU by design); on a GPU machine it still runs and reports the host CPU's figures.
"""

from __future__ import annotations

import argparse
import time

from harness.megakernel import corpus, records, suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=corpus.DEFAULT_SIZE)
    parser.add_argument("--seed", type=int, default=corpus.DEFAULT_SEED)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--skip-corpus", action="store_true", help="throughput and VM only")
    args = parser.parse_args()
    summary = records.new_summary()
    rows = []
    started = time.perf_counter()
    t = suite.throughput_part(summary, args.seed, args.size)
    rows += [("validator, small schedules (<=16 tasks)", f"{t['small_per_s']:,.0f} /s", f"n={t['small_n']}, mean {t['small_mean_tasks']:.1f} tasks"),
             ("validator, <=32 tasks", f"{t['upto32_per_s']:,.0f} /s", f"n={t['upto32_n']}"),
             ("validator, corpus mix", f"{t['mixed_per_s']:,.0f} /s", f"n={t['mixed_n']}, mean {t['mixed_mean_tasks']:.1f} tasks"),
             ("validator, largest lowering", f"{t['largest']['seconds'] * 1e3:.1f} ms", f"{t['largest']['tasks']} tasks"),
             # next to the rates, so a slow or shared core can be told from a slow validator
             ("python_calibration_us", f"{t['python_calibration_us']:.1f} us", "sum(range(1000)); ~8-10 on an idle core")]
    if not args.skip_corpus:
        suite.corpus_part(summary, args.seed, args.size, args.workers)
        c, co = summary["confusion"], summary["corpus"]
        rows += [("corpus labelled", f"{co['label_wall_s']:.1f} s wall", f"{co['size']} schedules, oracle {co['oracle']['modes']}"),
                 ("false accepts (all)", str(c["all"]["false_accept"]), ""),
                 ("false rejects (exhaustive)", str(c["exhaustive"]["false_reject"]), f"sampled: {c['sampled']['false_reject']}")]
    suite.vm_part(summary)
    v = summary["vm"]
    rows.append(("VM vs eager", f"max |err| {v['max_abs_err']:.2e}", f"{v['configs']} configs, {v['lowerings']} lowerings, all ok={v['all_ok']}"))
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"{name:{width}s}  {value:>22s}  {note}")
    print(f"total {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
