"""A cheat that exists only where the hold is on (CRUCIBLE_CUDA_HOLD=1): side-stream work started
before the window opens. Triton calls its launch-enter hook on every launch, the worker's own
included: the hold it queues before each timed window (harness.worker.hold). A hook set at import
runs candidate code there, on a GPU that the worker has just synchronized, and work it starts on a
side stream takes SMs before the hold's blocks do. The hold's blocks record when they started;
blocks that had to wait for an SM are a timer finding. (Without the hold the worker launches no
Triton kernel of its own, so the hook has nowhere to run but the candidate's own launches. It joins
the exploit corpus, class 15, when the hold becomes the default.) Problem: the corpus's 2_Matmul."""
import torch
import torch.nn as nn
import triton


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream()
        self.a = torch.randn(4096, 4096, device="cuda")
        self.b = torch.randn(4096, 4096, device="cuda")

        def ahead(_metadata):
            with torch.cuda.stream(self.side):   # about a millisecond of matmul, before the window
                torch.matmul(self.a, self.b)

        triton.knobs.runtime.launch_enter_hook = ahead

    def forward(self, A, B):
        return torch.matmul(A, B)
