"""Speed of light: FLOPs and minimum bytes per problem over the device's measured peaks."""

from __future__ import annotations

from typing import Any


def count_flops(model, inputs: list) -> int:
    """FLOPs of one forward, by torch's FlopCounterMode (matmuls and convolutions; pointwise ops count 0)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(*inputs)
    return int(counter.get_total_flops())


def tensor_bytes(values: Any) -> int:
    import torch

    if isinstance(values, torch.Tensor):
        return values.numel() * values.element_size()
    if isinstance(values, (list, tuple)):
        return sum(tensor_bytes(v) for v in values)
    if isinstance(values, dict):
        return sum(tensor_bytes(v) for v in values.values())
    return 0


def minimum_bytes(model, inputs: list, outputs: Any) -> int:
    """Inputs, parameters and buffers read once plus outputs written once: no kernel moves less."""
    state = {k: v for k, v in model.state_dict().items()}
    return tensor_bytes(inputs) + tensor_bytes(state) + tensor_bytes(outputs)


def sol_ms(flops: int, nbytes: int, peaks: dict, precision: str) -> float | None:
    """The floor time: the slower of compute at peak FLOP rate and traffic at peak bandwidth."""
    rate = peaks.get("flops_per_s", {}).get(precision)
    bandwidth = peaks.get("bytes_per_s")
    if not rate or not bandwidth:
        return None
    return 1e3 * max(flops / rate, nbytes / bandwidth)


def sol_fraction(floor_ms: float | None, measured_ms: float | None) -> float | None:
    if floor_ms is None or measured_ms is None or measured_ms <= 0:
        return None
    return floor_ms / measured_ms
