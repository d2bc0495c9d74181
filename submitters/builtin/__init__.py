"""``builtin``: Crucible's offline provider, a rule-based Triton kernel writer (NOT a language model).

It answers the same chat prompts an LLM gets. For the patterns it knows (elementwise and
activation chains with broadcasting, row reductions such as softmax, log-softmax and logsumexp,
layer/RMS/group/instance norms, matmuls with fused epilogues, after convolutions and pooling
kept in PyTorch) it replies with a ModelNew whose arithmetic runs in generated Triton kernels;
otherwise it replies "builtin: no rule for <what>". Results name it: provider "builtin", model
"builtin-rules-v1".

Pipeline: ``analyze`` (trace on the meta device) -> ``lower`` and ``decompose`` (fx graph to IR)
-> ``plan`` (group into kernels) -> ``emit_*`` (Triton source) -> ``writer`` (the file) ->
``provider`` (the chat protocol). Importing this package does not import torch.
"""

from submitters.builtin.provider import MODEL, PROVIDER, BuiltinProvider

__all__ = ["BuiltinProvider", "MODEL", "PROVIDER", "write_kernel"]


def write_kernel(reference_source: str, variant: str = "default") -> str:
    """The ModelNew source for ``reference_source``; raises ``ir.NoRule`` when no rule applies."""
    from submitters.builtin.writer import write

    return write(reference_source, variant).source
