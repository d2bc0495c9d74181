"""Prompts for the generation and performance-analysis agents.

Conventions other parts rely on (the builtin provider parses them): the problem's reference
source appears in a ```python block containing ``class Model``; a candidate to repair or speed up
appears in a ```python block containing ``class ModelNew`` (as the assistant's previous turn);
a feedback message starts with the line ``Feedback: <status>`` (compile_error, runtime_error,
incorrect, timeout, crashed, rejected or ok). Conversations stay bounded: only the latest
candidate and its feedback are sent, never the whole history.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

BACKENDS = ("triton", "cuda")
_METADATA_NAMES = {"SMALL", "FIXES", "EXCLUDE"}
MAX_FEEDBACK_CHARS = 3000
MAX_REPLY_CHARS = 6000  # a reply without code, sent back with its feedback

_CONTRACT = """Reply with the complete new file in ONE ```python code block. The file must define
`class ModelNew(nn.Module)` with the same constructor arguments and the same forward signature as
`Model`, return the same outputs (shapes and dtypes), and declare parameters with the same names
and shapes as `Model` (the judge copies Model's weights into ModelNew by name). Do not include
get_inputs, get_init_inputs, tests or prints. The forward pass must not draw random numbers."""

_BACKEND_RULES = {
    "triton": """Write the computation as Triton kernels (`@triton.jit`, `import triton`,
`import triton.language as tl`) launched from `ModelNew.forward`. Fuse operations where it
saves memory traffic. PyTorch may allocate outputs and reshape, but the arithmetic must happen
in your kernels.""",
    "cuda": """Write the computation as CUDA C++ kernels compiled at import time with
`torch.utils.cpp_extension.load_inline` (cpp_sources declaring the host functions, cuda_sources
holding the kernels and their launchers, functions=[...]), called from `ModelNew.forward`.
Fuse operations where it saves memory traffic. PyTorch may allocate outputs, but the arithmetic
must happen in your kernels.""",
}

_CPU_NOTE = """The judge runs on the CPU, with Triton kernels executed by Triton's interpreter
(TRITON_INTERPRET=1): keep tensors on the device of the inputs (never call .cuda() or hard-code
device="cuda"); correctness is checked for real, speed is not meaningful there."""


def check_backend(backend: str) -> str:
    from harness.errors import UserError

    if backend not in BACKENDS:
        raise UserError(f"backend {backend!r} is not supported; use one of: {', '.join(BACKENDS)}")
    return backend


def strip_metadata(source: str) -> str:
    """The problem source without Crucible's SMALL/FIXES/EXCLUDE assignments (not part of the task)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = source.splitlines()
    drop: set[int] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
            isinstance(t, ast.Name) and t.id in _METADATA_NAMES for t in targets
        ):
            drop.update(range(node.lineno - 1, node.end_lineno))
    kept = [line for index, line in enumerate(lines)
            if index not in drop and not line.startswith("# Crucible metadata")]
    return "\n".join(kept).rstrip() + "\n"


def code_block(source: str) -> str:
    return f"```python\n{source.rstrip()}\n```"


# -- device facts -------------------------------------------------------------------------------

def device_peaks(facts: dict) -> dict:
    """Measured peaks from the facts: a ``peaks`` dict, or a callable that measures them lazily
    (the runner's), or ``flops_per_s`` / ``bytes_per_s`` at the top level."""
    peaks = facts.get("peaks")
    if callable(peaks):
        try:
            peaks = peaks()
        except Exception:  # noqa: BLE001 - peaks only enrich the prompt; a failed measurement must not stop generation
            peaks = None
    merged = {key: facts[key] for key in ("flops_per_s", "bytes_per_s") if key in facts}
    merged.update(peaks if isinstance(peaks, dict) else {})
    return merged


def device_summary(facts: dict, precision: str = "fp32") -> str:
    """The device line of the prompts. Peaks are rounded to one significant figure: two measurements
    on one machine differ by tens of percent, and a prompt that changes with them would defeat the
    response cache and make every rerun a new question."""
    name = facts.get("name") or facts.get("device") or "unknown device"
    parts = [f"Target device: {name}."]
    peaks = device_peaks(facts)
    flops, bandwidth = peak_flops(peaks, precision), peaks.get("bytes_per_s")
    if flops:
        parts.append(f"Measured peak {precision} rate: about {rounded(flops / 1e12)} TFLOP/s.")
    if bandwidth:
        parts.append(f"Measured peak memory bandwidth: about {rounded(bandwidth / 1e9)} GB/s.")
    parts.append(f"Precision: {precision}.")
    return " ".join(parts)


def rounded(value: float) -> str:
    """``value`` to one significant figure, without exponent notation (0.2, 3, 50, 3000)."""
    if value <= 0:
        return "0"
    text = f"{float(f'{value:.1g}'):f}".rstrip("0").rstrip(".")
    return text or "0"


# What the prompts say that differs between machines or runs of one candidate: the device line,
# measured times and rates, profiler times. Replay matching masks these (``replay_view``).
_VARYING = (
    re.compile(r"Target device: .*?(?=Precision: )", re.DOTALL),
    re.compile(r"It runs in [^\n]*"),
    re.compile(r"Achieved (?:compute|bandwidth)[^\n]*"),
    re.compile(r"^(  [^\n]*: )[\d.]+ us over ([^\n]*)$", re.MULTILINE),
)


def replay_view(text: str) -> str:
    """``text`` with the parts that vary between machines masked, for matching a recorded request."""
    for pattern in _VARYING:
        text = pattern.sub(lambda match: (match.group(1) + "<time>" if pattern.groups else "<varies> "), text)
    return text


def peak_flops(peaks: dict, precision: str) -> float | None:
    rate = peaks.get("flops_per_s")
    if isinstance(rate, dict):
        rate = rate.get(precision)
    return float(rate) if rate else None


def is_cpu(facts: dict) -> bool:
    kind = str(facts.get("device_kind") or facts.get("device") or "").lower()
    if kind in ("cpu", "cuda"):
        return kind == "cpu"
    return str(facts.get("name") or "").upper().startswith("CPU")


# -- generation agent ---------------------------------------------------------------------------

def system_prompt(backend: str, facts: dict, precision: str = "fp32") -> str:
    sections = [
        ("You are an expert GPU kernel engineer. You rewrite PyTorch models as faster custom kernels "
         "that compute the same results."),
        _BACKEND_RULES[check_backend(backend)],
        device_summary(facts, precision),
    ]
    if is_cpu(facts) and backend == "triton":
        sections.append(_CPU_NOTE)
    sections.append(_CONTRACT)
    return "\n\n".join(section.replace("\n", " ") for section in sections)


def task_message(problem_source: str) -> str:
    return (
        "Here is the reference PyTorch model. Write ModelNew, an optimised drop-in replacement.\n\n"
        + code_block(strip_metadata(problem_source))
    )


def generation_messages(problem_source: str, backend: str, facts: dict, precision: str = "fp32") -> list[dict]:
    return [
        {"role": "system", "content": system_prompt(backend, facts, precision)},
        {"role": "user", "content": task_message(problem_source)},
    ]


def repair_messages(problem_source: str, backend: str, facts: dict, candidate_source: str, feedback: str,
                    precision: str = "fp32", reply_text: str | None = None) -> list[dict]:
    """The task, the candidate as the assistant's last turn, and the judge's feedback on it. A reply
    that held no candidate (``reply_text``) is that turn itself, bounded."""
    messages = generation_messages(problem_source, backend, facts, precision)
    if reply_text is not None and not candidate_source.strip():
        messages.append({"role": "assistant", "content": _bounded(reply_text, MAX_REPLY_CHARS) or "(empty reply)"})
    elif candidate_source.strip():
        messages.append({"role": "assistant", "content": code_block(candidate_source)})
    messages.append({"role": "user", "content": feedback})
    return messages


def optimisation_messages(problem_source: str, backend: str, facts: dict, candidate_source: str, record: dict,
                          recommendation: str, precision: str = "fp32") -> list[dict]:
    feedback = (
        feedback_text(record)
        + "\n\nA performance analyst profiled this kernel and recommends:\n"
        + recommendation.strip()
        + "\n\nApply the recommendation while keeping the results correct. " + _REPLY_AGAIN
    )
    return repair_messages(problem_source, backend, facts, candidate_source, feedback, precision)


# -- feedback from the judge --------------------------------------------------------------------

_REPLY_AGAIN = "Reply with the complete corrected file in one ```python block."


def feedback_text(record: dict) -> str:
    """``Feedback: <status>`` and what the judge reported, bounded; never expected outputs."""
    status = str(record.get("status") or ("ok" if record.get("correct") else "runtime_error"))
    lines = [f"Feedback: {status}"]
    flags = record.get("flags") or []
    if flags:
        lines.append("The judge flagged this kernel (flagged kernels are never ranked): " + ", ".join(map(str, flags)))
    if status == "ok":
        lines.append("The kernel compiles and its outputs match the reference." + _timing_line(record))
    else:
        reason = str(record.get("reason") or "").strip()
        if reason:
            lines.append(_bounded(reason))
        mismatch = (record.get("checks") or {}).get("mismatch")
        if mismatch:
            lines.append("Mismatch report:\n" + _bounded(_as_text(mismatch), 1500))
        lines.append(_REPLY_AGAIN)
    return "\n".join(lines)


def no_code_feedback(reason: str, truncated: bool = False) -> str:
    cut = " The reply was cut off at the token limit; be more concise." if truncated else ""
    return f"Feedback: compile_error\nNo candidate could be taken from your reply: {reason}.{cut}\n{_REPLY_AGAIN}"


def _timing_line(record: dict) -> str:
    candidate, eager = record.get("candidate_ms"), record.get("eager_ms")
    if candidate is None:
        return " Its speed was not measured."
    text = f" It runs in {candidate:.4g} ms"
    if eager is not None:
        text += f"; PyTorch eager takes {eager:.4g} ms"
    if record.get("speedup") is not None:
        text += f" (speedup {record['speedup']:.3g}x)"
    if record.get("sol_fraction") is not None:
        text += f"; it reaches {100 * record['sol_fraction']:.1f}% of the speed of light"
    return text + "."


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str, indent=1)


def _bounded(text: str, limit: int = MAX_FEEDBACK_CHARS) -> str:
    """Head and tail of long text: a traceback's last lines say the most."""
    if len(text) <= limit:
        return text
    head, tail = limit // 4, limit - limit // 4
    return f"{text[:head]}\n... [{len(text) - limit} characters omitted] ...\n{text[-tail:]}"


# -- performance-analysis agent -----------------------------------------------------------------

ANALYST_SYSTEM = (
    "You are a GPU performance analyst. You read a kernel, its profile and its distance from the "
    "speed of light, find the bottleneck, and recommend the single change that would speed it up most "
    "(fusion, tiling and block sizes, memory coalescing, vectorised loads, fewer launches, better "
    "occupancy, tensor cores). Answer in at most 150 words: the bottleneck, then the recommendation. "
    "Do not write the code."
)


def analysis_messages(problem_source: str, candidate_source: str, record: dict, facts: dict,
                      precision: str = "fp32") -> list[dict]:
    user = "\n\n".join([
        "Reference model:\n" + code_block(strip_metadata(problem_source)),
        "Current kernel (correct):\n" + code_block(candidate_source),
        profile_summary(record, facts, precision),
    ])
    return [{"role": "system", "content": ANALYST_SYSTEM}, {"role": "user", "content": user}]


def profile_summary(record: dict, facts: dict, precision: str = "fp32") -> str:
    lines = [device_summary(facts, precision), "Measurement:" + _timing_line(record)]
    lines += _speed_of_light_lines(record, facts, precision)
    profile = record.get("profile") or []
    if profile:
        lines.append("Top kernels (torch profiler):")
        for entry in profile[:10]:
            lines.append(f"  {entry.get('name', '?')}: {float(entry.get('time_us') or 0):.1f} us "
                         f"over {entry.get('calls', '?')} call(s)")
    else:
        lines.append("No per-kernel profile is available for this run.")
    return "\n".join(lines)


def _speed_of_light_lines(record: dict, facts: dict, precision: str) -> list[str]:
    milliseconds = record.get("candidate_ms")
    if not milliseconds:
        return []
    seconds = milliseconds / 1e3
    lines = []
    flops, nbytes = record.get("flops"), record.get("bytes")
    peaks = device_peaks(facts)
    peak_rate, peak_bw = peak_flops(peaks, precision), peaks.get("bytes_per_s")
    if flops:
        achieved = flops / seconds
        share = f" = {100 * achieved / peak_rate:.1f}% of peak" if peak_rate else ""
        lines.append(f"Achieved compute: {achieved / 1e12:.3f} TFLOP/s ({flops:.3g} FLOPs){share}.")
    if nbytes:
        achieved = nbytes / seconds
        share = f" = {100 * achieved / peak_bw:.1f}% of peak" if peak_bw else ""
        lines.append(f"Achieved bandwidth (minimum bytes): {achieved / 1e9:.1f} GB/s ({nbytes:.3g} bytes){share}.")
    return lines
