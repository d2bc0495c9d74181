"""The worker's own state class is frozen before the candidate is imported, like every class on the
reply path: the guards get it from the worker's load handler (no import of the worker's main loop)."""

from harness.judge.evaluate import evaluate, EvalCache

PATCHES_THE_WORKER_STATE = """import sys
import torch
import torch.nn as nn

state_class = sys.modules["harness.judge.worker.main"].State
try:
    state_class.handle = lambda self, message: {"ok": True}
    PATCHED = True
except TypeError:
    PATCHED = False


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        if PATCHED:
            raise RuntimeError("the worker's state class took a new attribute")
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        return torch.relu(x * 2.0 + self.bias)
"""


def test_a_candidate_cannot_patch_the_worker_state_class(scale_relu, fast_opts):
    record = evaluate(scale_relu, PATCHES_THE_WORKER_STATE, fast_opts, EvalCache())
    assert record["status"] == "ok", record["reason"]


def test_the_reply_path_includes_the_state_class_it_is_given():
    from harness.judge.worker.guards import _reply_path_classes

    class Marker:
        pass

    assert Marker in _reply_path_classes(Marker) and None not in _reply_path_classes()
