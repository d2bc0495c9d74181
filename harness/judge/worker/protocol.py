"""The private channel between judge and worker: one socket pair, pickled messages.

Judge -> worker messages are ordinary pickles (the judge is trusted). Worker -> judge messages are
unpickled with a whitelist, because the candidate shares the worker's process and could write
anything to the socket: only plain data and torch's tensor-rebuild functions are accepted, so a
forged message cannot run code in the judge.
"""

from __future__ import annotations

import io
import pickle
from multiprocessing.reduction import ForkingPickler

# Exit codes a worker uses on purpose; anything else (a signal, os._exit by the candidate) is a crash.
EXIT_OK = 0
EXIT_PROTOCOL = 3

STATUSES = ("ok", "compile_error", "runtime_error", "incorrect", "timeout", "crashed", "rejected", "harness_error")

_SAFE_BUILTINS = {"dict", "list", "tuple", "set", "frozenset", "int", "float", "str", "bytes", "bool",
                  "complex", "slice", "range", "bytearray", "NoneType"}
_SAFE_MODULE_PREFIXES = ("torch.multiprocessing.reductions", "torch._utils", "torch.storage")
_SAFE_TORCH_NAMES = {"Size", "device", "dtype", "float32", "float16", "bfloat16", "float64", "int64", "int32",
                     "int16", "int8", "uint8", "bool", "complex64", "complex128", "UntypedStorage",
                     "TypedStorage", "Tensor", "float8_e4m3fn", "float8_e5m2"}


class UnsafeMessage(Exception):
    """The worker sent something the judge refuses to unpickle."""


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if "." in name:  # pickle resolves dotted names attribute by attribute: ("torch.cuda", "os.system")
            raise UnsafeMessage(f"worker sent a dotted global: {module}.{name}")
        if module == "builtins" and name in _SAFE_BUILTINS:
            return super().find_class(module, name)
        if module == "collections" and name == "OrderedDict":
            return super().find_class(module, name)
        if module == "torch" and name in _SAFE_TORCH_NAMES:
            return super().find_class(module, name)
        # Not torch.storage._load_from_bytes: it is torch.load(weights_only=False), a full unpickler.
        if module.startswith(_SAFE_MODULE_PREFIXES) and (name.startswith("rebuild_") or name.startswith("_rebuild")):
            return super().find_class(module, name)
        if module in ("torch.storage", "torch.cuda") and name.endswith("Storage"):
            return super().find_class(module, name)
        raise UnsafeMessage(f"worker sent a forbidden object: {module}.{name}")


def load_untrusted(data: bytes):
    """Unpickle a worker message with the whitelist (torch's reductions must be registered)."""
    import torch.multiprocessing  # noqa: F401  (registers tensor reductions)

    return _RestrictedUnpickler(io.BytesIO(data)).load()


def dump(obj, _dumps=ForkingPickler.dumps, _bytes=bytes) -> bytes:
    """Pickle with torch's reductions, so tensors travel by shared memory or CUDA IPC. (The pickler
    is bound at import: candidate code in the worker cannot rebind what replies go through.)"""
    use_file_system_sharing()

    return _bytes(_dumps(obj))


def use_file_system_sharing() -> None:
    """Share CPU tensors through named shared-memory files: the default (passing descriptors through
    multiprocessing's resource sharer) needs a common authkey, which unrelated processes lack."""
    import torch.multiprocessing

    if torch.multiprocessing.get_sharing_strategy() != "file_system":
        torch.multiprocessing.set_sharing_strategy("file_system")
