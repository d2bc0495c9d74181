"""Did a custom kernel run? Triton launches are counted in the worker; CUDA kernels built with
load_inline show up in the profile under names no PyTorch library uses."""

from __future__ import annotations

# Kernel-name prefixes of code that ships with PyTorch and its libraries (not the candidate's).
LIBRARY_PREFIXES = ("void at::", "at::", "void cutlass", "cutlass", "sm90_", "sm80_", "ampere_", "volta_",
                    "turing_", "void cudnn", "cudnn", "nvjet", "Memcpy", "Memset", "void gemv", "gemv", "gemm",
                    "void gemm", "cublas", "void cublas", "xmma", "void (anonymous namespace)::", "triton_",
                    "void splitKreduce", "aten::", "cudaLaunch", "cudaDevice", "cudaStream", "cudaEvent",
                    "cudaMemcpy", "cudaMalloc", "cudaFree", "void elementwise", "void vectorized", "void reduce",
                    "void unrolled", "void index", "void tensor", "void scatter", "void gather", "void softmax",
                    "void cunn", "void implicit_convolve", "void fft", "Activity Buffer", "Runtime", "Torch-Compiled")


def custom_kernel_ran(verdict: dict) -> bool:
    if verdict.get("triton_launches"):
        return True
    for row in verdict.get("profile") or []:
        if not row["name"].startswith(LIBRARY_PREFIXES) and not row["name"].startswith("aten"):
            return True
    return False
