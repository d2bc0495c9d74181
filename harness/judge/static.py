"""The static layer: advisory findings from reading a candidate's source, recorded as flags.

``scan(source)`` returns flag names ``static:<rule>``. Our own AST rules look for the shapes of
the cheats in EXPLOITS.md; ``kernelguard`` (PyPI), where installed, adds its findings as
``static:kg_<pattern>``. Static findings are a second layer only: obfuscated code walks past
them, so every cheat they name is also stopped at run time (worker guards, judge checks).
The source is only parsed here, never imported or executed.
"""

from __future__ import annotations

import ast
import functools
from typing import Callable, Iterator

KERNELGUARD_SEVERITIES = ("critical", "high")
# kernelguard patterns the run time already decides better: TRIVIAL_PROBE ("forward just calls a
# PyTorch op") is the worker's no_custom_kernel flag, which knows trusted baselines are exempt.
KERNELGUARD_LEFT_TO_RUN_TIME = frozenset({"TRIVIAL_PROBE"})
_JIT_DECORATORS = ("jit", "autotune", "heuristics")
_LAUNCH_LOADERS = ("load_inline", "load", "compile_cuda")
_STREAM_CALLS = ("torch.cuda.Stream", "cuda.Stream", "torch.Stream", "torch.cuda.stream", "cuda.stream",
                 "torch.cuda.ExternalStream", "cuda.ExternalStream", "torch.cuda.set_stream")
_THREAD_CALLS = ("threading.Thread", "threading.Timer", "Thread", "Timer", "_thread.start_new_thread",
                 "start_new_thread", "ThreadPoolExecutor", "concurrent.futures.ThreadPoolExecutor",
                 "ProcessPoolExecutor", "concurrent.futures.ProcessPoolExecutor")
_PROCESS_CALLS = ("multiprocessing.Process", "multiprocessing.Pool", "os.fork", "os.forkpty", "subprocess.Popen",
                  "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output", "os.system",
                  "os.popen", "os.execv", "os.execve", "os.spawnv", "os.posix_spawn", "Popen")
_TIMER_TARGETS = ("time.perf_counter", "time.perf_counter_ns", "time.time", "time.time_ns", "time.monotonic",
                  "time.monotonic_ns", "time.process_time", "torch.cuda.synchronize", "torch.cuda.Event",
                  "torch.cuda.current_stream", "torch._C._cuda_synchronize", "triton.testing.do_bench")
_TIMER_ATTRIBUTES = ("elapsed_time", "perf_counter", "perf_counter_ns", "synchronize", "do_bench")
_TIMER_OWNERS = ("time", "torch.cuda", "torch.cuda.Event", "Event", "torch._C", "triton.testing")
_EXEC_CALLS = ("exec", "eval", "compile", "builtins.exec", "builtins.eval", "builtins.compile", "marshal.loads",
               "types.FunctionType", "types.CodeType", "__import__")
_INTROSPECTION_CALLS = ("gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._getframe",
                        "sys._current_frames", "inspect.currentframe", "inspect.stack", "inspect.getouterframes",
                        "sys.settrace", "sys.setprofile", "threading.settrace")
_FRAME_ATTRIBUTES = ("f_back", "tb_frame", "f_locals", "f_globals", "gi_frame")
_SUBCLASS_CALLS = ("_make_subclass", "as_subclass", "_make_wrapper_subclass")


def scan(source: str) -> list[str]:
    """Flag names for ``source`` (sorted, unique); a source that does not parse yields none
    (the worker reports the syntax error as the verdict)."""
    return list(_scan(source))


@functools.lru_cache(maxsize=32)
def _scan(source: str) -> tuple[str, ...]:
    # Kept per source: a generator's draft is often judged again unchanged as its final candidate
    # (mkevolve checks its composition, then the run judges it), and kernelguard's reading of a
    # composed source of 100 KB takes seconds on a small CPU.
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    flags = {f"static:{name}" for name, rule in RULES.items() if rule(tree)}
    flags.update(kernelguard_flags(source))
    return tuple(sorted(flags))


def kernelguard_flags(source: str) -> set[str]:
    """kernelguard's critical and high findings as ``static:kg_<pattern>``; none if it is absent."""
    try:
        import kernelguard
    except ImportError:
        return set()
    try:
        result = kernelguard.analyze_code(source, compute_structural_hash=False)
    except Exception:  # noqa: BLE001 - an advisory tool's own bug must not stop an evaluation
        return {"static:kg_error"}
    return {f"static:kg_{match['pattern'].lower()}" for match in result.get("matched_patterns", [])
            if match.get("severity") in KERNELGUARD_SEVERITIES and match.get("field") == "code"
            and match.get("pattern") not in KERNELGUARD_LEFT_TO_RUN_TIME}


def _walk(node: ast.AST) -> list[ast.AST]:
    """``ast.walk(node)`` as a list, kept on the node: the rules walk the same trees many times
    (every rule the whole module, the launch rule each function again per round)."""
    nodes = node.__dict__.get("_crucible_nodes")
    if nodes is None:
        nodes = node._crucible_nodes = list(ast.walk(node))
    return nodes


def dotted(node: ast.AST) -> str:
    """``torch.cuda.Stream`` for the expression ``torch.cuda.Stream``; '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _calls(tree: ast.AST) -> Iterator[tuple[ast.Call, str]]:
    for node in _walk(tree):
        if isinstance(node, ast.Call):
            yield node, dotted(node.func)


def _calls_any(tree: ast.AST, names: tuple[str, ...]) -> bool:
    return any(name in names for _, name in _calls(tree))


# ---- rules: each takes the module's AST and says whether the shape is there ----

def fallback_try_except(tree: ast.AST) -> bool:
    """A kernel launch inside ``try`` whose handler swallows the failure (no re-raise): the
    PyTorch path then runs in its place and the result looks like the kernel's."""
    launchers = _launching_functions(tree)
    for node in _walk(tree):
        if isinstance(node, ast.Try) and any(_launches(stmt, launchers) for stmt in node.body):
            if any(not _reraises(handler) for handler in node.handlers):
                return True
        if isinstance(node, ast.With) and any("suppress" in dotted(item.context_expr.func)
                                              for item in node.items if isinstance(item.context_expr, ast.Call)):
            if any(_launches(stmt, launchers) for stmt in node.body):
                return True
    return False


def _launching_functions(tree: ast.AST) -> set[str]:
    """Names whose calls launch a kernel: Triton kernels (``k[grid](...)`` on a ``@triton.jit``
    function), modules from load_inline, and helpers that call either."""
    extensions = {f"{node.name}[]" for node in _walk(tree) if isinstance(node, ast.FunctionDef)
                  and any(dotted(d.func if isinstance(d, ast.Call) else d).split(".")[-1] in _JIT_DECORATORS
                          for d in node.decorator_list)}
    for node in _walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if dotted(node.value.func).split(".")[-1] in _LAUNCH_LOADERS:
                extensions.update(dotted(target) for target in node.targets)
    helpers: set[str] = set()
    functions = [n for n in _walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for _ in range(3):  # helpers that call helpers, a few levels deep
        for function in functions:
            if any(_is_launch(call, extensions | helpers) for call in _walk(function) if isinstance(call, ast.Call)):
                helpers.add(function.name)
    return extensions | helpers


def _is_launch(call: ast.Call, launchers: set[str]) -> bool:
    if isinstance(call.func, ast.Subscript):
        return f"{dotted(call.func.value).split('.')[-1]}[]" in launchers
    name = dotted(call.func)
    if not name:
        return False
    owner = name.rsplit(".", 1)[0]
    return name in launchers or name.split(".")[-1] in launchers or owner in launchers


def _launches(statement: ast.AST, launchers: set[str]) -> bool:
    return any(_is_launch(node, launchers) for node in _walk(statement) if isinstance(node, ast.Call))


def _reraises(handler: ast.ExceptHandler) -> bool:
    return any(isinstance(node, ast.Raise) for node in _walk(handler))


def stream_created(tree: ast.AST) -> bool:
    return _calls_any(tree, _STREAM_CALLS)


def thread_created(tree: ast.AST) -> bool:
    return _calls_any(tree, _THREAD_CALLS)


def process_created(tree: ast.AST) -> bool:
    return _calls_any(tree, _PROCESS_CALLS)


def timer_patching(tree: ast.AST) -> bool:
    """Assigning to (or setattr on) the clocks and synchronisation the harness times with."""
    for node in _walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            name = dotted(target)
            if name in _TIMER_TARGETS or (isinstance(target, ast.Attribute) and target.attr in _TIMER_ATTRIBUTES
                                          and dotted(target.value) in _TIMER_OWNERS):
                return True
    for call, name in _calls(tree):
        if name == "setattr" and len(call.args) >= 2 and dotted(call.args[0]) in _TIMER_OWNERS:
            return True
    return False


def harness_access(tree: ast.AST) -> bool:
    """Candidates have no business with the harness's modules or the worker's command line."""
    for node in _walk(tree):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "harness" for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "harness":
            return True
        if isinstance(node, ast.Attribute) and dotted(node) == "sys.argv":
            return True
    return False


def tensor_subclass(tree: ast.AST) -> bool:
    for node in _walk(tree):
        if isinstance(node, ast.ClassDef) and any(dotted(base).split(".")[-1] == "Tensor" for base in node.bases):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in ("__torch_function__", "__torch_dispatch__"):
            return True
    return any(name.split(".")[-1] in _SUBCLASS_CALLS for _, name in _calls(tree))


def exec_string(tree: ast.AST) -> bool:
    return _calls_any(tree, _EXEC_CALLS) or any(
        name == "getattr" and len(call.args) > 1 and isinstance(call.args[1], ast.Constant)
        and call.args[1].value in ("exec", "eval", "compile") for call, name in _calls(tree))


def introspection(tree: ast.AST) -> bool:
    if _calls_any(tree, _INTROSPECTION_CALLS):
        return True
    return any(isinstance(node, ast.Attribute) and node.attr in _FRAME_ATTRIBUTES for node in _walk(tree))


RULES: dict[str, Callable[[ast.AST], bool]] = {
    "fallback_try_except": fallback_try_except,
    "stream_created": stream_created,
    "thread_created": thread_created,
    "process_created": process_created,
    "timer_patching": timer_patching,
    "harness_access": harness_access,
    "tensor_subclass": tensor_subclass,
    "exec_string": exec_string,
    "introspection": introspection,
}
