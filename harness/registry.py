"""One registry for every plug-in kind: generators, LLM providers, metrics, timers.

A plug-in registers itself where it is written, with ``@generator(name)`` / ``@provider(name)``
(or ``@register(kind, name)``); ``create(kind, name, **options)`` builds one by name. No list of
plug-ins is kept here: each kind has a *home* (generators: every module of the ``submitters``
package; providers: ``harness.llm.providers`` and the ``submitters`` package, where the offline
``builtin`` writer lives) that is imported on the first lookup of that kind,
and third parties come in through the entry-point group ``crucible.<kind>s`` (for example
``crucible.generators``), whose objects are loaded only when first asked for.

A generator class may declare ``options`` (a tuple of ``harness.options.Option``: the CLI and
the pytest plugin add them) and ``suites`` (the suites it writes candidates for; default
``("kernelbench",)``).
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib import metadata
from typing import Any, Callable

from harness.errors import UserError

KINDS = ("generator", "provider", "metric", "timer")

# Where each kind's bundled plug-ins live: a package (each of its modules is imported) or a module.
_HOMES: dict[str, tuple[str, ...]] = {
    "generator": ("submitters",),
    "provider": ("harness.llm.providers", "submitters"),   # submitters/builtin: the offline writer
    "metric": (),
    "timer": (),
}

_HOW_TO_ADD = {
    "generator": ("To add one, write submitters/{file}.py with a class decorated "
                  "@register(\"generator\", \"{name}\") (docs/INTERFACES.md, section 6), or install a package "
                  "that names it in the entry-point group crucible.generators."),
    "provider": ("To add one, decorate its factory @register(\"provider\", \"{name}\") in a module that is "
                 "imported, or install a package that names it in the entry-point group crucible.providers."),
}

_entries: dict[str, dict[str, Callable[..., Any]]] = {kind: {} for kind in KINDS}
_entry_points: dict[str, dict[str, metadata.EntryPoint]] = {kind: {} for kind in KINDS}
_loaded: set[str] = set()


class PluginError(UserError):
    """A plug-in that cannot be found or loaded."""


def register(kind: str, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Class or factory decorator: make ``factory`` available as ``create(kind, name)``."""
    _check_kind(kind)

    def decorate(factory: Callable[..., Any]) -> Callable[..., Any]:
        _entries[kind][name] = factory
        return factory

    return decorate


def generator(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return register("generator", name)


def provider(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return register("provider", name)


def names(kind: str) -> list[str]:
    """All registered names of a kind, built-ins and entry points alike (entry points not loaded)."""
    _load(kind)
    return sorted(set(_entries[kind]) | set(_entry_points[kind]))


def lookup(kind: str, name: str) -> Callable[..., Any]:
    """The class or factory registered under ``name``; a PluginError saying how to add one otherwise."""
    _load(kind)
    if name not in _entries[kind] and name in _entry_points[kind]:
        _entries[kind][name] = _load_entry_point(kind, _entry_points[kind][name])
    try:
        return _entries[kind][name]
    except KeyError:
        raise PluginError(_unknown(kind, name)) from None


def create(kind: str, name: str, **options: Any) -> Any:
    """Build the plug-in ``name`` of ``kind`` with ``options``."""
    return lookup(kind, name)(**options)


def loaded(kind: str) -> dict[str, Callable[..., Any]]:
    """Every plug-in of a kind, entry points loaded too (for the option table, which needs them all)."""
    return {name: lookup(kind, name) for name in names(kind)}


def generator_suites(name: str) -> tuple[str, ...]:
    """The suites generator ``name`` writes candidates for (its ``suites``; KernelBench by default)."""
    return tuple(getattr(lookup("generator", name), "suites", ("kernelbench",)))


def check_applies(name: str, suite: str) -> None:
    suites = generator_suites(name)
    if suite not in suites:
        raise PluginError(f"generator {name!r} writes candidates for {' and '.join(suites)}, not for the {suite} suite; "
                          f"run it with pytest suites/{suites[0]} --generator {name}")


def _unknown(kind: str, name: str) -> str:
    known = ", ".join(names(kind)) or "none"
    message = f"unknown {kind} {name!r}; known {kind}s: {known}."
    hint = _HOW_TO_ADD.get(kind)
    return message + (" " + hint.format(name=name, file=name.replace("-", "_")) if hint else "")


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown plug-in kind {kind!r}; kinds are {', '.join(KINDS)}")


def _load(kind: str) -> None:
    _check_kind(kind)
    if kind in _loaded:
        return
    _loaded.add(kind)
    for home in _HOMES[kind]:
        for module in _modules_of(home):
            _import_home_module(module)
    for entry in metadata.entry_points(group=f"crucible.{kind}s"):
        _entry_points[kind].setdefault(entry.name, entry)


def _modules_of(home: str) -> list[str]:
    """``home`` itself, and when it is a package every module and sub-package directly in it."""
    try:
        package = importlib.import_module(home)
    except ModuleNotFoundError as error:
        if error.name is not None and home.startswith(error.name):
            return []  # an optional component that this installation leaves out
        raise
    path = getattr(package, "__path__", None)
    if path is None:
        return []
    return [f"{home}.{info.name}" for info in sorted(pkgutil.iter_modules(path), key=lambda i: i.name)
            if not info.name.startswith("_")]


def _import_home_module(module: str) -> None:
    try:
        importlib.import_module(module)
    except UserError:
        raise
    except Exception as error:  # noqa: BLE001 - a broken plug-in file is named, with its error
        raise PluginError(f"the plug-in module {module} failed to import ({type(error).__name__}: {error}); "
                          f"fix it or move it out of its package") from error


def _load_entry_point(kind: str, entry: metadata.EntryPoint) -> Callable[..., Any]:
    try:
        return entry.load()
    except Exception as error:  # noqa: BLE001 - a third party's broken package is named, with its error
        dist = getattr(entry.dist, "name", "an installed package")
        raise PluginError(f"{kind} {entry.name!r} from {dist} ({entry.value}) failed to load "
                          f"({type(error).__name__}: {error}); reinstall or fix that package") from error
