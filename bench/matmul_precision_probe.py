"""How far apart two fp32 matmuls of one problem are, against a float64 product: the builtin writer's
Triton kernel, torch's (cuBLAS on CUDA) and, for scale, a split-K sum of torch products.

On the H200 (2026-12-01) the builtin kernel for L1/1 (N = 4096) missed fp32's 1e-4 tolerance on
1,946 of 16.8M elements against cuBLAS (max abs error 0.0011), while on a CPU torch's product and a
split-K order of it differ by at most 1.2e-4 with none outside the tolerance. This probe says which
of the two GPU products is the far one.

Usage: python bench/matmul_precision_probe.py [--device cuda] [--n 4096] [--k K] [--variant default]
(CPU: TRITON_INTERPRET=1 and a small --n; the interpreter multiplies tiles with numpy.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SOURCE = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn({m}, {k}), torch.randn({k}, {n})]


def get_init_inputs():
    return []
'''


def compare(got, want, tolerance: float = 1e-4) -> str:
    diff = (got.double() - want.double()).abs()
    outside = int((diff > tolerance + tolerance * want.double().abs()).sum())
    return f"max abs {float(diff.max()):.3g}, mean abs {float(diff.mean()):.3g}, outside 1e-4: {outside} of {diff.numel()}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if _cuda() else "cpu")
    parser.add_argument("--n", type=int, default=4096, help="M = N (default 4096, L1/1's size)")
    parser.add_argument("--k", type=int, default=None, help="K (default: N)")
    parser.add_argument("--variant", action="append", default=None,
                        help="builtin writer variant(s) (default: default and conservative)")
    args = parser.parse_args(argv)
    import torch

    from harness.llm.builtin import write_kernel
    from harness.precision import apply_backend_flags

    apply_backend_flags({"allow_tf32": False})  # as the harness runs fp32
    n, k = args.n, args.k or args.n
    source = SOURCE.format(m=n, n=n, k=k)
    torch.manual_seed(0)
    a = torch.randn(n, k, device=args.device)
    b = torch.randn(k, n, device=args.device)
    exact = (a.double() @ b.double())
    torch_fp32 = a @ b
    chunk = max(1, k // 8)
    split = sum(a[:, s:s + chunk] @ b[s:s + chunk] for s in range(0, k, chunk))
    print(f"device {args.device}, M = N = {n}, K = {k}; allow_tf32 {torch.backends.cuda.matmul.allow_tf32}, "
          f"float32 matmul precision {torch.get_float32_matmul_precision()}")
    rows = [("torch fp32 vs float64", compare(torch_fp32, exact)),
            ("torch split-K fp32 vs torch fp32", compare(split, torch_fp32))]
    for variant in args.variant or ["default", "conservative"]:
        model = _load_model_new(write_kernel(source, variant), variant)().to(args.device)
        with torch.no_grad():
            got = model(a, b)
        rows += [(f"builtin {variant} vs float64", compare(got, exact)),
                 (f"builtin {variant} vs torch fp32", compare(got, torch_fp32))]
    width = max(len(name) for name, _ in rows)
    for name, text in rows:
        print(f"{name:<{width}}  {text}")
    return 0


def _load_model_new(text: str, variant: str):
    """ModelNew of a kernel source, imported from a file: triton.jit reads each kernel's source
    through inspect, which fails for code run by exec (the interpreter on the CPU does not care)."""
    import importlib.util
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="crucible-mm-probe-"))
    path = folder / f"builtin_{variant}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"crucible_mm_probe_{variant}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # triton looks the module up while compiling
    spec.loader.exec_module(module)
    return module.ModelNew


def _cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


if __name__ == "__main__":
    raise SystemExit(main())
