"""Model, schedule and target configurations, checked on construction (UserError on bad values)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from harness.errors import UserError

SM_POLICIES = ("round_robin", "load_balance", "spread")
PAGINGS = ("none", "graph_color")


def _positive(owner: str, **values) -> None:
    for name, value in values.items():
        if type(value) is not int or value < 1:
            raise UserError(f"{owner}.{name} = {value!r}: must be a positive integer")


@dataclass(frozen=True)
class ModelConfig:
    """A Llama-family decoder (RMSNorm, RoPE rotate-half, GQA attention, SwiGLU MLP)."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    rms_eps: float = 1e-5
    rope_theta: float = 10000.0
    max_seq: int = 64

    def __post_init__(self):
        _positive("ModelConfig", hidden=self.hidden, layers=self.layers, heads=self.heads,
                  kv_heads=self.kv_heads, head_dim=self.head_dim, intermediate=self.intermediate,
                  vocab=self.vocab, max_seq=self.max_seq)
        if self.heads % self.kv_heads:
            raise UserError(f"ModelConfig: heads {self.heads} is not a multiple of kv_heads "
                            f"{self.kv_heads} (grouped-query attention shares each KV head evenly)")
        if self.head_dim % 2:
            raise UserError(f"ModelConfig.head_dim = {self.head_dim}: RoPE needs an even head_dim")

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    def name(self) -> str:
        return (f"h{self.hidden}-L{self.layers}-H{self.heads}-KV{self.kv_heads}-d{self.head_dim}"
                f"-I{self.intermediate}-V{self.vocab}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "ModelConfig":
        return cls(**_known(cls, data, "model"))


@dataclass(frozen=True)
class ScheduleConfig:
    """How to cut the decode step into tasks and place them (the search space)."""

    num_sms: int = 4
    gemv_tile: int = 0            # output columns per GEMV tile; 0 = one tile per projection
    lm_head_tile: int = 0
    silu_tile: int = 0
    attn_heads_per_task: int = 0  # 0 = all heads in one task
    sm_policy: str = "round_robin"
    paging: str = "none"
    smem_local: bool = False      # activations touched from one SM only live in shared memory

    def __post_init__(self):
        _positive("ScheduleConfig", num_sms=self.num_sms)
        for name in ("gemv_tile", "lm_head_tile", "silu_tile", "attn_heads_per_task"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise UserError(f"ScheduleConfig.{name} = {value!r}: must be an int >= 0 (0 = untiled)")
        if self.sm_policy not in SM_POLICIES:
            raise UserError(f"ScheduleConfig.sm_policy = {self.sm_policy!r}: use one of {', '.join(SM_POLICIES)}")
        if self.paging not in PAGINGS:
            raise UserError(f"ScheduleConfig.paging = {self.paging!r}: use one of {', '.join(PAGINGS)}")

    def name(self) -> str:
        return (f"sm{self.num_sms}-t{self.gemv_tile}-lm{self.lm_head_tile}-s{self.silu_tile}"
                f"-a{self.attn_heads_per_task}-{self.sm_policy}-{self.paging}{'-smem' if self.smem_local else ''}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "ScheduleConfig":
        return cls(**_known(cls, data, "schedule"))


def _known(cls, data: dict, what: str) -> dict:
    if not isinstance(data, dict):
        raise UserError(f"a {what} config must be a JSON object, got {type(data).__name__}")
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise UserError(f"unknown {what} config keys {unknown}; known: {sorted(names)}")
    return dict(data)


# Targets as data. Bandwidth and peak are per device; the cost model splits them per SM.
TARGETS = {
    "h200": {"name": "h200", "num_sms": 132, "max_resident": 132, "hbm_gbs": 4800.0, "tflops": 989.0},
    "h100": {"name": "h100", "num_sms": 132, "max_resident": 132, "hbm_gbs": 3350.0, "tflops": 989.0},
}


def toy_target(num_sms: int) -> dict:
    """A target with exactly ``num_sms`` SMs (H200-like speeds), for small lowerings."""
    return {"name": f"toy{num_sms}", "num_sms": num_sms, "max_resident": num_sms,
            "hbm_gbs": 4800.0 * num_sms / 132, "tflops": 989.0 * num_sms / 132}


PRESETS = {
    "tiny": ModelConfig(hidden=8, layers=1, heads=2, kv_heads=1, head_dim=4, intermediate=16, vocab=16),
    "small": ModelConfig(hidden=16, layers=2, heads=4, kv_heads=2, head_dim=4, intermediate=32, vocab=32),
    "llama-1b": ModelConfig(hidden=2048, layers=16, heads=32, kv_heads=8, head_dim=64,
                            intermediate=8192, vocab=128256, rope_theta=500000.0, max_seq=2048),
}
