"""The adversarial corpus: real lowerings, single- and multi-fault mutants, random schedules.

Deterministic by seed: the same (seed, size) gives the same documents in the same order, and
``digest`` hashes them all. Labels come from the oracle only; the validator is judged against them.
"""

from __future__ import annotations

import hashlib
import itertools
import pickle
import random
from dataclasses import dataclass

from harness.megakernel.configs import ModelConfig, ScheduleConfig
from harness.megakernel.format import canonical
from harness.megakernel.lowering import lower
from harness.megakernel.mutations import MUTATIONS, mutate
from harness.megakernel.randdag import random_schedule

DEFAULT_SIZE = 10_400
DEFAULT_SEED = 20260601

MODELS = {
    "m1": ModelConfig(hidden=8, layers=1, heads=2, kv_heads=1, head_dim=4, intermediate=16, vocab=16, max_seq=8),
    "m2": ModelConfig(hidden=16, layers=1, heads=4, kv_heads=2, head_dim=4, intermediate=32, vocab=16, max_seq=8),
    "m3": ModelConfig(hidden=8, layers=2, heads=2, kv_heads=2, head_dim=4, intermediate=16, vocab=16, max_seq=8),
    "m4": ModelConfig(hidden=16, layers=1, heads=2, kv_heads=2, head_dim=8, intermediate=24, vocab=24, max_seq=8),
}
BIG_MODEL = ModelConfig(hidden=32, layers=2, heads=4, kv_heads=2, head_dim=8, intermediate=64, vocab=32,
                        max_seq=8)
# Wide enough that the interleavings outgrow the exhaustive budget: the oracle samples these.
BIG_GRID = {"num_sms": (6, 8), "gemv_tile": (4,), "attn_heads_per_task": (1,),
            "sm_policy": ("round_robin", "spread"), "paging": ("none", "graph_color"), "smem_local": (False,)}
POOL, BIG_SHARE = 480, 0.05
GRID = {"num_sms": (1, 2, 3, 4), "gemv_tile": (0, 4), "attn_heads_per_task": (0, 1),
        "sm_policy": ("round_robin", "load_balance", "spread"), "paging": ("none", "graph_color"),
        "smem_local": (False, True)}
# Share of the corpus per source; single-fault mutants are split evenly over the classes.
SHARES = {"lowering": 0.04, "single": 0.52, "multi": 0.15, "random": 0.29}


@dataclass
class Item:
    id: str
    source: str        # lowering | single | multi | random
    cls: str           # corpus class: lowering, mut/<fault>, multi, random
    doc: object

    @property
    def tasks(self) -> int:
        try:
            return len(self.doc["tasks"])
        except (TypeError, KeyError):
            return 0


def grid_configs(models: dict | None = None, grid: dict | None = None) -> list[tuple[str, ModelConfig, ScheduleConfig]]:
    models, grid = models or MODELS, grid or GRID
    keys = list(grid)
    configs = []
    for name, model in models.items():
        for values in itertools.product(*(grid[k] for k in keys)):
            configs.append((name, model, ScheduleConfig(**dict(zip(keys, values)))))
    return configs


class _Lowerings:
    """A fixed pool of lowerings drawn from the grids; mutants copy members of the pool."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        small, big = grid_configs(), grid_configs({"big": BIG_MODEL}, BIG_GRID)
        self.pool = []
        for i in range(POOL):
            name, model, sched = rng.choice(big if rng.random() < BIG_SHARE else small)
            pos = rng.randrange(model.max_seq)
            self.pool.append((f"{name}/{sched.name()}/pos{pos}", pickle.dumps(lower(model, sched, pos))))

    def draw(self) -> tuple[str, dict]:
        label, frozen = self.rng.choice(self.pool)
        return label, pickle.loads(frozen)  # a private deep copy, fast


CHUNKS = 8
_POOLS: dict[int, "_Lowerings"] = {}


def _pool(seed: int) -> "_Lowerings":
    """The lowering pool of a seed, built once per process within a run."""
    if seed not in _POOLS:
        _POOLS.clear()
        _POOLS[seed] = _Lowerings(random.Random(seed))
    return _POOLS[seed]


def build(seed: int = DEFAULT_SEED, size: int = DEFAULT_SIZE) -> list[Item]:
    """The whole corpus: the concatenation of its chunks, in order."""
    return [item for chunk in range(CHUNKS) for item in build_chunk(seed, size, chunk)]


def chunk_counts(size: int, chunk: int) -> dict[str, int]:
    """How many items of each source chunk ``chunk`` holds (the chunks add up to ``size``)."""
    counts = {}
    for source, share in SHARES.items():
        total = int(size * share) if source != "random" else 0
        counts[source] = total // CHUNKS + (1 if chunk < total % CHUNKS else 0)
    rest = size - sum(int(size * share) for source, share in SHARES.items() if source != "random")
    counts["random"] = rest // CHUNKS + (1 if chunk < rest % CHUNKS else 0)
    return counts


def build_chunk(seed: int, size: int, chunk: int) -> list[Item]:
    """One eighth of the corpus, deterministic in (seed, size, chunk) alone."""
    lowerings = _pool(seed)
    rng = random.Random(f"{seed}/{chunk}")
    lowerings.rng = random.Random(f"{seed}/{chunk}/draw")
    counts = chunk_counts(size, chunk)
    start = sum(chunk_counts(size, k)["lowering"] for k in range(chunk))
    pool = lowerings.pool
    items = [Item(f"lowering/{chunk}.{i}:{pool[(start + i) % len(pool)][0]}", "lowering", "lowering",
                  pickle.loads(pool[(start + i) % len(pool)][1])) for i in range(counts["lowering"])]
    items += _single(rng, lowerings, counts["single"], chunk)
    items += _multi(rng, lowerings, counts["multi"], chunk)
    items += [Item(f"random/{chunk}.{i}", "random", "random", random_schedule(rng)) for i in range(counts["random"])]
    return items


def _base(rng: random.Random, lowerings: _Lowerings) -> tuple[str, dict]:
    """Mutants start from a lowering most of the time, from a safe-looking random DAG otherwise."""
    if rng.random() < 0.8:
        return lowerings.draw()
    return "random", random_schedule(rng)


def _single(rng, lowerings, total: int, chunk: int) -> list[Item]:
    names = sorted(MUTATIONS)
    items = []
    for i in range(total):
        fault = names[(i + chunk * total) % len(names)]
        for attempt in range(50):
            label, doc = _base(rng, lowerings)
            if mutate(doc, fault, rng):
                items.append(Item(f"mut/{fault}/{chunk}.{i}:{label}", "single", f"mut/{fault}", doc))
                break
    return items


def _multi(rng, lowerings, total: int, chunk: int) -> list[Item]:
    names = sorted(MUTATIONS)
    items = []
    for i in range(total):
        label, doc = _base(rng, lowerings)
        faults = rng.sample(names, rng.randint(2, 3))
        applied = [f for f in faults if mutate(doc, f, rng)]
        items.append(Item(f"multi/{chunk}.{i}:{'+'.join(applied)}:{label}", "multi", "multi", doc))
    return items


def digest(items: list[Item]) -> str:
    h = hashlib.sha256()
    for item in items:
        h.update(item.id.encode())
        h.update(canonical(item.doc).encode())
    return h.hexdigest()
