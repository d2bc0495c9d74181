"""Speed of light: FLOPs and minimum bytes per problem over the device's measured peaks."""

from __future__ import annotations

from typing import Any


def count_flops(model, inputs: list) -> int:
    """FLOPs of one forward, by torch's FlopCounterMode (matmuls and convolutions; pointwise ops count 0)."""
    return count_work(model, inputs)[0]


def count_work(model, inputs: list) -> tuple[int, int]:
    """(FLOPs, of which convolutions) of one forward, by torch's FlopCounterMode. Every convolution
    (1-3d, transposed) is counted under ``aten.convolution``, at the direct algorithm's FLOPs."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(*inputs)
    by_op = counter.get_flop_counts().get("Global", {})
    conv = sum(count for op, count in by_op.items() if "convolution" in str(op))
    return int(counter.get_total_flops()), int(conv)


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


def flag_floor_ms(flops: int, conv_flops: int, nbytes: int, peaks: dict, precision: str) -> float | None:
    """The floor a time is flagged ``below_sol`` under: ``sol_ms`` without the convolutions' FLOPs.
    Fast convolution algorithms (Winograd, FFT) multiply less than the direct algorithm that
    FlopCounterMode counts: on the H200, cuDNN ran a 3x3 fp32 convolution (AlexNet's conv5 at batch
    1,024) at 1.94x the FLOP rate of the fp32 matmul peak. What no convolution can beat is its bytes."""
    return sol_ms(max(0, flops - conv_flops), nbytes, peaks, precision)


def raised_to_achieved(peaks: dict, flops: int, nbytes: int, achieved_ms: float | None, precision: str) -> dict:
    """Peaks no lower than the rates a trusted run achieved: a reference that did ``flops`` and moved
    ``nbytes`` in ``achieved_ms`` proves the device can go at least that fast, so a floor above the
    reference's own time comes from an underestimated peak, never from the reference. ``flops`` should
    leave out convolutions (fast algorithms do fewer than FlopCounterMode counts)."""
    if not achieved_ms or achieved_ms <= 0 or not peaks.get("bytes_per_s"):
        return peaks
    seconds = achieved_ms / 1e3
    rates = dict(peaks.get("flops_per_s", {}))
    if precision in rates:
        rates[precision] = max(rates[precision], flops / seconds)
    return {**peaks, "flops_per_s": rates, "bytes_per_s": max(peaks["bytes_per_s"], nbytes / seconds)}


def sol_fraction(floor_ms: float | None, measured_ms: float | None) -> float | None:
    if floor_ms is None or measured_ms is None or measured_ms <= 0:
        return None
    return floor_ms / measured_ms
