"""Put a kernel file's top-level names under a prefix, so several can live in one composed file.

Two sub-kernels written separately may both define ``_k0_pointwise`` or ``ModelNew``. Every name a
file binds at top level (functions, classes, constants) is renamed, and so is every reference to it
that is not shadowed by a local of the same name (a kernel parameter ``BLOCK`` beside a module
constant ``BLOCK`` stays the parameter). Imports are lifted out, to be merged at the top of the
composed file. ``load_inline(name=...)`` extension names get the prefix too, so two CUDA parts never
build into one extension. The problem's helper functions (``get_inputs``) and a ``__main__`` block
are dropped.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

DROPPED_FUNCTIONS = {"get_inputs", "get_init_inputs"}


@dataclass
class Namespaced:
    imports: list[str]      # import statements, as source lines
    body: str               # the rest, renamed
    names: dict[str, str]   # old top-level name -> new


def namespaced(source: str, prefix: str) -> Namespaced:
    tree = ast.parse(source)
    imports = [ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    tree.body = [node for node in tree.body if not _dropped(node)]
    names = {name: prefix + name for name in _top_level_names(tree) - _imported_names(tree)}
    tree = _Renamer(names, prefix).visit(tree)
    return Namespaced(imports, ast.unparse(ast.fix_missing_locations(tree)), names)


def _dropped(node: ast.stmt) -> bool:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in DROPPED_FUNCTIONS:
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return True  # a docstring
    return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        for sub in _walk_outside_scopes(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                names.add(sub.id)
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(sub.name)
    return names


def _imported_names(tree: ast.Module) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return found


def _walk_outside_scopes(node: ast.AST):
    """ast.walk that does not enter function, lambda, class or comprehension bodies."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if current is not node and isinstance(current, _SCOPES):
            continue
        stack.extend(ast.iter_child_nodes(current))


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp)


def _local_names(scope: ast.AST) -> set[str]:
    """Names a function (or lambda, or comprehension) binds for itself."""
    names: set[str] = set()
    declared_global: set[str] = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        arguments = scope.args
        every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        names |= {a.arg for a in every}
    body = scope.generators if isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) \
        else (scope.body if isinstance(scope.body, list) else [scope.body])
    for statement in body:
        for sub in _walk_outside_scopes(statement):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                names.add(sub.id)
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(sub.name)
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                names |= {(alias.asname or alias.name).split(".")[0] for alias in sub.names}
            elif isinstance(sub, ast.ExceptHandler) and sub.name:
                names.add(sub.name)
            elif isinstance(sub, (ast.Global, ast.Nonlocal)):
                declared_global |= set(sub.names)
    return names - declared_global


def _class_names(node: ast.ClassDef) -> set[str]:
    """Class attributes a class body binds (they are not the module's names, whatever they are called)."""
    names: set[str] = set()
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
            continue
        names |= {sub.id for sub in _walk_outside_scopes(statement)
                  if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del))}
    return names


class _Renamer(ast.NodeTransformer):
    def __init__(self, names: dict[str, str], prefix: str):
        self.names, self.prefix = names, prefix
        # (is_class, names bound there) of the enclosing scopes, innermost last. A class body's names
        # shadow only inside the class body itself, never in its methods (Python's scoping rule).
        self.scopes: list[tuple[bool, set[str]]] = []
        self.depth = 0                      # 0: module level

    def _shadowed(self, name: str) -> bool:
        for index, (is_class, names) in enumerate(self.scopes):
            innermost = index == len(self.scopes) - 1
            if name in names and (innermost or not is_class):
                return True
        return False

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names and not self._shadowed(node.id):
            node.id = self.names[node.id]
        return node

    def visit_Global(self, node: ast.Global) -> ast.Global:
        node.names = [self.names.get(name, name) for name in node.names]
        return node

    def _function(self, node):
        for item in node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d]:
            self.visit(item)
        if self.depth == 0 and node.name in self.names:
            node.name = self.names[node.name]
        self.scopes.append((False, _local_names(node)))
        self.depth += 1
        node.body = [self.visit(statement) for statement in node.body]
        self.depth -= 1
        self.scopes.pop()
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        for item in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(item)
        if self.depth == 0 and node.name in self.names:
            node.name = self.names[node.name]
        self.scopes.append((True, _class_names(node)))
        self.depth += 1
        node.body = [self.visit(statement) for statement in node.body]
        self.depth -= 1
        self.scopes.pop()
        return node

    def _scoped(self, node):
        self.scopes.append((False, _local_names(node)))
        self.generic_visit(node)
        self.scopes.pop()
        return node

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _scoped

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        called = ast.unparse(node.func)
        if called.endswith("load_inline") or called.endswith("cpp_extension.load"):
            for keyword in node.keywords:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    keyword.value = ast.Constant(f"{keyword.value.value}{self.prefix.rstrip('_')}")
        return node
