"""The validator against a baseline revision of itself: identical verdicts, and the speed ratio.

    python bench/megakernel_validator_equivalence.py [--baseline REV] [--fuzz 50000] [--rounds 5]

The baseline's structure/hb/validator/witness modules are read with ``git show REV:...`` into a
temporary package (the other megakernel modules are shared), so both versions run in this process.
Compared, as ``Verdict.to_dict()`` (verdict, classes, violations with messages and witnesses,
stats) and as the witness trace of the first violation:

* every corpus schedule (all chunks of the default seed and size),
* the largest lowering of ``throughput.largest``,
* ``--fuzz`` random mutations of corpus schedules (keys deleted, values replaced by wrong types,
  None, huge or negative ints, strings, nested garbage, list elements dropped or repeated), which
  must never make either version raise.

Then the small schedules (<= 16 tasks) are validated by the two versions alternately, ``--rounds``
rounds, best CPU time of each, and the ratio is printed with ``python_calibration_us``. Exits 1 on
any difference.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.megakernel import corpus, throughput  # noqa: E402
from harness.megakernel.configs import PRESETS, TARGETS  # noqa: E402
from harness.megakernel.lowering import lower  # noqa: E402
from harness.megakernel import validator as current  # noqa: E402
from harness.megakernel import witness as current_witness  # noqa: E402

MODULES = ("structure", "hb", "validator", "witness")
GARBAGE = [None, -1, 0, 1, 2, 3, 7, 99, 2**31, 2**63, 10**30, -(10**30), 0.0, 1.0, 0.5, float("nan"),
           float("inf"), True, False, "", "0", "1", "id", "HBM", "F32", "ACTIVATION", [], {}, [0], [1, 2],
           [[]], [[0, 1]], [None], {"id": 0}, {"counter": 0, "threshold": 1}, [[[[[]]]]], {"a": {"b": [{}]}},
           (0, 1), b"x"]


def load_baseline(rev: str):
    """(validate, witness_trace) of revision ``rev``, imported as the package ``mk_baseline``."""
    folder = Path(tempfile.mkdtemp(prefix="mk_baseline_"))
    package = folder / "mk_baseline"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in MODULES:
        source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:harness/megakernel/{name}.py"],
                                check=True, capture_output=True, text=True).stdout
        for other in MODULES:
            source = source.replace(f"from harness.megakernel.{other} import", f"from mk_baseline.{other} import")
        (package / f"{name}.py").write_text(source)
    sys.path.insert(0, str(folder))
    validator = importlib.import_module("mk_baseline.validator")
    witness = importlib.import_module("mk_baseline.witness")
    return validator.validate, witness.witness_trace


def outcome(validate, trace, doc):
    """Everything a caller can see of one verdict, or the exception it raised."""
    try:
        verdict = validate(doc)
        first = verdict.violations[0] if verdict.violations else None
        return verdict.to_dict(), trace(doc, first) if first and first["family"] != "structural" else None
    except Exception as error:  # noqa: BLE001 - a raise is a finding, reported as a difference
        return ("raised", type(error).__name__, str(error))


def same(a, b) -> bool:
    return repr(a) == repr(b)  # repr: NaN witnesses compare equal to themselves


def paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, prefix + (index,))


def mutate(doc, rng: random.Random):
    """A copy of ``doc`` with one to three random edits."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        where = rng.choice(list(paths(doc)))
        if not where:
            return rng.choice(GARBAGE)
        parent = doc
        for key in where[:-1]:
            parent = parent[key]
        key, action = where[-1], rng.random()
        if action < 0.25:
            del parent[key]
        elif action < 0.35 and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif action < 0.45:
            other = rng.choice(list(paths(doc)))
            value = doc
            for step in other:
                value = value[step]
            parent[key] = copy.deepcopy(value)
        else:
            parent[key] = copy.deepcopy(rng.choice(GARBAGE))
    return doc


def compare(docs, old, new, what: str) -> int:
    differences = index = 0
    for index, doc in enumerate(docs, 1):
        a, b = outcome(*old, doc), outcome(*new, doc)
        if not same(a, b) or b[0] == "raised":  # the current version must never raise
            differences += 1
            if differences <= 5:
                print(f"DIFFERENCE {what} #{index}:\n  baseline: {a!r}\n  current:  {b!r}")
    print(f"{what}: {index} compared, {differences} differences")
    return differences


def alternate(old_validate, new_validate, docs, rounds: int) -> dict:
    best = {"baseline": float("inf"), "current": float("inf")}
    for _ in range(rounds):
        for name, validate in (("baseline", old_validate), ("current", new_validate)):
            started = time.process_time()
            for doc in docs:
                validate(doc)
            best[name] = min(best[name], time.process_time() - started)
    return {name: len(docs) / seconds for name, seconds in best.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default="HEAD", help="git revision to compare against")
    parser.add_argument("--fuzz", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    old = load_baseline(args.baseline)
    new = (current.validate, current_witness.witness_trace)
    docs = [item.doc for chunk in range(corpus.CHUNKS)
            for item in corpus.build_chunk(corpus.DEFAULT_SEED, corpus.DEFAULT_SIZE, chunk)]
    differences = compare(docs, old, new, "corpus")
    largest = lower(PRESETS["llama-1b"], throughput.LARGEST, pos=1000, target=TARGETS["h200"])
    differences += compare([largest], old, new, "largest lowering")
    rng = random.Random(args.seed)
    seeds = [doc for doc in docs if throughput._tasks(doc) <= 32]
    differences += compare((mutate(rng.choice(seeds), rng) for _ in range(args.fuzz)), old, new, "fuzzed")
    small = [doc for doc in docs[:2 * len(docs) // corpus.CHUNKS] if throughput._tasks(doc) <= throughput.SMALL_TASKS]
    rates = alternate(old[0], new[0], small, args.rounds)
    print(f"small schedules (n={len(small)}), {args.rounds} alternating rounds, best of each: "
          f"baseline {rates['baseline']:,.0f}/s, current {rates['current']:,.0f}/s, "
          f"ratio {rates['current'] / rates['baseline']:.3f}, "
          f"python_calibration_us {throughput.calibration_us():.1f}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
