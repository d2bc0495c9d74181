"""What the worker captures before the candidate is imported, and checks afterwards.

The candidate runs in this process, so it can patch anything. These guards do not make that
impossible; they make the common tricks visible (flags) and keep the worker's own timing on
references taken before the candidate existed. The judge's clock is the independent check.
"""

from __future__ import annotations

import threading
import time


class Guards:
    def __init__(self, torch_module, triton_module=None):
        torch = torch_module
        self.perf_counter = time.perf_counter
        self.perf_counter_ns = time.perf_counter_ns
        self.originals = {"time.perf_counter": (time, "perf_counter", time.perf_counter),
                          "time.perf_counter_ns": (time, "perf_counter_ns", time.perf_counter_ns),
                          "time.time": (time, "time", time.time),
                          "torch.Tensor.__init_subclass__": (torch.Tensor, "__init_subclass__",
                                                             torch.Tensor.__dict__.get("__init_subclass__"))}
        if torch.cuda.is_available():
            self.cuda_synchronize = torch.cuda.synchronize
            event = torch.cuda.Event
            self.event_record = event.record
            self.event_elapsed = event.elapsed_time
            self.event_class = event
            self.originals.update({
                "torch.cuda.synchronize": (torch.cuda, "synchronize", torch.cuda.synchronize),
                "torch.cuda.Event": (torch.cuda, "Event", event),
                "torch.cuda.Event.record": (event, "record", event.record),
                "torch.cuda.Event.elapsed_time": (event, "elapsed_time", event.elapsed_time),
            })
        self.thread_count = threading.active_count()
        self.triton_launches = 0
        if triton_module is not None:
            self._hook_triton_launches()

    def patched(self) -> list[str]:
        """Names of captured functions that no longer are what they were."""
        found = []
        for label, (owner, attribute, original) in self.originals.items():
            current = owner.__dict__.get(attribute) if isinstance(owner, type) else getattr(owner, attribute, None)
            if current is not original:
                found.append(label)
        return found

    def new_threads(self) -> int:
        return max(0, threading.active_count() - self.thread_count)

    def _hook_triton_launches(self) -> None:
        """Count Triton kernel launches (compiled or interpreted) by wrapping the launch methods."""
        guards = self
        for module_name, class_name in (("triton.runtime.jit", "JITFunction"),
                                        ("triton.runtime.interpreter", "InterpretedFunction")):
            try:
                module = __import__(module_name, fromlist=[class_name])
                cls = getattr(module, class_name)
            except (ImportError, AttributeError):
                continue
            original = cls.run

            def counted(self, *args, __original=original, **kwargs):
                guards.triton_launches += 1
                return __original(self, *args, **kwargs)

            cls.run = counted
