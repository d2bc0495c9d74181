"""One registry for every plug-in kind: generators, LLM providers, metrics, timers.

Built-in plug-ins register with the ``@register(kind, name)`` decorator when their module is
imported; ``create(kind, name, **options)`` builds one by name. Built-in modules are listed in
``_BUILTIN_MODULES`` and imported lazily, and third parties come in through the package entry-point
group ``crucible.<kind>s`` (for example ``crucible.generators``), also loaded only on first use.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any, Callable

from harness.errors import UserError

KINDS = ("generator", "provider", "metric", "timer")

# Modules that register built-in plug-ins of each kind; imported on first lookup of that kind.
_BUILTIN_MODULES: dict[str, tuple[str, ...]] = {
    "generator": (
        "submitters.reference",
        "submitters.inductor",
        "submitters.direct",
        "submitters.kforge",
        "submitters.mkevolve",
        "harness.megakernel.search",
    ),
    "provider": ("harness.llm.providers",),
    "metric": (),
    "timer": (),
}

_entries: dict[str, dict[str, Callable[..., Any]]] = {kind: {} for kind in KINDS}
_loaded: set[str] = set()


def register(kind: str, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Class or factory decorator: make ``factory`` available as ``create(kind, name)``."""
    _check_kind(kind)

    def decorate(factory: Callable[..., Any]) -> Callable[..., Any]:
        _entries[kind][name] = factory
        return factory

    return decorate


def names(kind: str) -> list[str]:
    """All registered names of a kind, built-ins and entry points alike."""
    _load(kind)
    return sorted(_entries[kind])


def lookup(kind: str, name: str) -> Callable[..., Any]:
    """The factory registered under ``name``; a UserError listing the known names otherwise."""
    _load(kind)
    try:
        return _entries[kind][name]
    except KeyError:
        known = ", ".join(sorted(_entries[kind])) or "none"
        raise UserError(f"unknown {kind} {name!r}; known {kind}s: {known}") from None


def create(kind: str, name: str, **options: Any) -> Any:
    """Build the plug-in ``name`` of ``kind`` with ``options``."""
    return lookup(kind, name)(**options)


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown plug-in kind {kind!r}; kinds are {', '.join(KINDS)}")


def _load(kind: str) -> None:
    _check_kind(kind)
    if kind in _loaded:
        return
    _loaded.add(kind)
    for module in _BUILTIN_MODULES[kind]:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            # A built-in module that is not part of this installation (an optional component) is
            # skipped; a missing dependency *inside* an existing module is a real error.
            if error.name is None or not module.startswith(error.name):
                raise
    for entry in metadata.entry_points(group=f"crucible.{kind}s"):
        if entry.name not in _entries[kind]:
            _entries[kind][entry.name] = _lazy(entry)


def _lazy(entry: metadata.EntryPoint) -> Callable[..., Any]:
    def factory(**options: Any) -> Any:
        return entry.load()(**options)

    return factory
