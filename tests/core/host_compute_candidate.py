"""A cheat on the head start the GPU is given before each timed window: the worker queues the flush
(and, where it is on, the hold) ahead of the start event, and the window opens only when the GPU
reaches it. This candidate computes the answer on the host meanwhile: inputs copied out and the
result copied in on a side stream, whose copy engine the busy SMs do not stop, so nothing is left
for the window but an empty stream. The worker charges the call's host time as a floor on its time
(harness/worker/handlers.py, _timed_call), and so it gains nothing. Problem: 7_Small_Matmul."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream()

    def forward(self, A, B):
        with torch.cuda.stream(self.side):
            a, b = A.cpu(), B.cpu()                  # waits for the side stream only
            out = (a @ b).to(A.device, non_blocking=False)
        return out
