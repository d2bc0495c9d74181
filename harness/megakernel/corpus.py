"""The adversarial corpus: real lowerings, single- and multi-fault mutants, random schedules.

Deterministic by seed: the same (seed, size) gives the same documents in the same order, and
``digest`` hashes them all. Labels come from the oracle only; the validator is judged against them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
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


def build(seed: int = DEFAULT_SEED, size: int = DEFAULT_SIZE) -> list[Item]:
    rng = random.Random(seed)
    lowerings = _Lowerings(random.Random(rng.random()))
    counts = {k: int(size * share) for k, share in SHARES.items()}
    counts["random"] += size - sum(counts.values())
    items = [Item(f"lowering/{i}:{label}", "lowering", "lowering", pickle.loads(text))
             for i, (label, text) in enumerate(itertools.islice(itertools.cycle(lowerings.pool), counts["lowering"]))]
    items += _single(rng, lowerings, counts["single"])
    items += _multi(rng, lowerings, counts["multi"])
    items += [Item(f"random/{i}", "random", "random", random_schedule(rng)) for i in range(counts["random"])]
    return items


def _base(rng: random.Random, lowerings: _Lowerings) -> tuple[str, dict]:
    """Mutants start from a lowering most of the time, from a safe-looking random DAG otherwise."""
    if rng.random() < 0.8:
        return lowerings.draw()
    return "random", random_schedule(rng)


def _single(rng, lowerings, total: int) -> list[Item]:
    names = sorted(MUTATIONS)
    items = []
    for i in range(total):
        fault = names[i % len(names)]
        for attempt in range(50):
            label, doc = _base(rng, lowerings)
            if mutate(doc, fault, rng):
                items.append(Item(f"mut/{fault}/{i}:{label}", "single", f"mut/{fault}", doc))
                break
    return items


def _multi(rng, lowerings, total: int) -> list[Item]:
    names = sorted(MUTATIONS)
    items = []
    for i in range(total):
        label, doc = _base(rng, lowerings)
        faults = rng.sample(names, rng.randint(2, 3))
        applied = [f for f in faults if mutate(doc, f, rng)]
        items.append(Item(f"multi/{i}:{'+'.join(applied)}:{label}", "multi", "multi", doc))
    return items


def digest(items: list[Item]) -> str:
    h = hashlib.sha256()
    for item in items:
        h.update(item.id.encode())
        h.update(canonical(item.doc).encode())
    return h.hexdigest()
