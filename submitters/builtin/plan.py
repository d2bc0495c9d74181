"""Group computed values into kernels, greedily, in execution order.

Three kinds of kernel:

- ``pointwise``: elementwise values of one shape (inputs broadcast into it);
- ``rows``: one or more reductions over the same rows of one tensor, the elementwise values
  before them (recomputed in every pass over the row), the per-row values after them, and the
  elementwise values that combine both (softmax, the norms, ``x / x.norm(dim, keepdim=True)``);
- ``scan``: a prefix sum or product along one dim, with the elementwise values before and after it;
- ``matmul``: a tiled product with the elementwise epilogue that follows it.

A value joins the latest open group it fits; a value read outside its group is stored and
closes its group (nothing joins a group after one of its values was used elsewhere, which keeps
the launch order valid). Materialized inputs are loaded, never recomputed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from submitters.builtin.ir import Axis, Matmul, NoRule, Pointwise, Reduce, Scalar, Scan, Value, is_computed, \
    keepdim_shape, reduced_shape, tensor_inputs
from submitters.builtin.lower import Kept, Program, ReduceTuple

MAX_REDUCTIONS = 6


@dataclass(frozen=True)
class PlanOptions:
    fuse_matmul_epilogue: bool = True
    fuse_prologue: bool = True   # elementwise values before a reduction are computed in its kernel
    fuse_siblings: bool = True   # independent values over the same tensor share an open kernel


@dataclass(eq=False)
class Group:
    index: int
    kind: str                                   # pointwise | rows | scan | matmul
    full_shape: tuple
    members: list[Value] = field(default_factory=list)
    level: dict[int, str] = field(default_factory=dict)   # uid -> full | row | core
    axis: Axis | None = None
    reductions: list[Reduce] = field(default_factory=list)
    scan: Scan | None = None
    closed: bool = False
    outputs: list[Value] = field(default_factory=list)
    position: int = 0

    @property
    def row_shapes(self) -> set:
        if self.axis is None or self.axis.groups is not None:
            return {None}
        return {keepdim_shape(self.full_shape, self.axis.dims), reduced_shape(self.full_shape, self.axis.dims, False)}

    def add(self, value: Value, level: str, position: int) -> None:
        self.members.append(value)
        self.level[value.uid] = level
        self.position = position


@dataclass
class Plan:
    program: Program
    steps: list = field(default_factory=list)        # Kept and Group, in launch order
    materialized: set = field(default_factory=set)   # uids of computed values stored to memory

    @property
    def groups(self) -> list[Group]:
        return [step for step in self.steps if isinstance(step, Group)]


def plan(program: Program, options: PlanOptions = PlanOptions()) -> Plan:
    planner = _Planner(program, options)
    planner.run()
    return planner.result


class _Planner:
    def __init__(self, program: Program, options: PlanOptions):
        self.program, self.options = program, options
        self.group_of: dict[int, Group] = {}
        self.groups: list[Group] = []
        self.result = Plan(program=program)
        self.kept_positions: list[tuple[int, Kept]] = []

    def run(self) -> None:
        for position, item in enumerate(self.program.items):
            if isinstance(item, Kept):
                self._kept(item, position)
            elif isinstance(item, Pointwise):
                self._pointwise(item, position)
            elif isinstance(item, Reduce):
                self._reduce(item, position)
            elif isinstance(item, Scan):
                self._scan(item, position)
            elif isinstance(item, Matmul):
                self._matmul(item, position)
        for value in _flatten(self.program.output):
            if isinstance(value, Value) and is_computed(value):
                self._consume_outside(value)
        self._finish()

    # -- items -------------------------------------------------------------------------------------

    def _kept(self, kept: Kept, position: int) -> None:
        for node in kept.node.all_input_nodes:
            found = self.program.env.get(node)
            if isinstance(found, ReduceTuple):
                raise NoRule(f"the (values, indices) pair of {found.kind} passed to {kept.node.target}")
            if isinstance(found, Value) and is_computed(found):
                self._consume_outside(found)
        self.kept_positions.append((position, kept))

    def _pointwise(self, value: Pointwise, position: int) -> None:
        computed = [u for u in tensor_inputs(value) if is_computed(u)]
        fitting = {}
        for u in computed:
            group = self.group_of[u.uid]
            if not group.closed and group.index not in fitting:
                level = self._fit(group, value)
                if level:
                    fitting[group.index] = (group, level)
        if not computed and self.options.fuse_siblings:  # reads only materialized tensors: any open group fits
            fitting = self._open_fits(value)
        target, level = max(fitting.values(), key=lambda pair: pair[0].index) if fitting else (None, "full")
        for u in computed:
            if self.group_of[u.uid] is not target:
                self._consume_outside(u)
        if target is None:
            if value.shape is None:
                raise NoRule("GroupNorm statistics used outside the norm")
            target = self._new_group("pointwise", value.shape)
        self._add(target, value, level, position)

    def _reduce(self, value: Reduce, position: int) -> None:
        source = value.input
        group = self.group_of.get(source.uid) if is_computed(source) else None
        if group is not None and not group.closed and self._can_absorb(group, value):
            if group.kind == "pointwise":
                group.kind, group.axis = "rows", value.axis
        else:
            if group is not None:
                self._consume_outside(source)
            group = self._open_rows(value.axis, source.shape) if self.options.fuse_siblings else None
            if group is None:
                group = self._new_group("rows", source.shape)
                group.axis = value.axis
        group.reductions.append(value)
        self._add(group, value, "row", position)

    def _scan(self, value: Scan, position: int) -> None:
        source = value.input
        group = self.group_of.get(source.uid) if is_computed(source) else None
        if group is not None and not group.closed and group.kind == "pointwise" and self.options.fuse_prologue:
            group.kind = "scan"
        else:
            if group is not None:
                self._consume_outside(source)
            group = self._new_group("scan", source.shape)
        group.axis, group.scan = value.axis, value
        self._add(group, value, "full", position)

    def _matmul(self, value: Matmul, position: int) -> None:
        for operand in (value.a, value.b):
            if is_computed(operand):
                self._consume_outside(operand)
        group = self._new_group("matmul", value.shape)
        self._add(group, value, "core", position)

    # -- rules -------------------------------------------------------------------------------------

    def _fit(self, group: Group, value: Pointwise) -> str | None:
        """The level at which ``value`` can join ``group`` (full or row), or None."""
        mine = [u for u in tensor_inputs(value) if is_computed(u) and self.group_of.get(u.uid) is group]
        if any(isinstance(u, Reduce) and u.kind.startswith("arg") for u in mine):
            return None  # indices are stored, never computed with
        if group.kind in ("pointwise", "scan"):
            return "full" if value.shape == group.full_shape else None
        if group.kind == "matmul":
            return "full" if self.options.fuse_matmul_epilogue and value.shape == group.full_shape else None
        if value.shape == group.full_shape and value.shape is not None:
            ok = all(group.level[u.uid] == "full" or self._row_broadcasts(u, group) for u in mine)
            return "full" if ok else None
        if value.shape in group.row_shapes and all(group.level[u.uid] == "row" for u in mine):
            external = [u for u in tensor_inputs(value) if not isinstance(u, Scalar) and u not in mine]
            if external and group.axis.groups is not None:
                return None
            return "row"
        return None

    def _open_rows(self, axis: Axis, shape: tuple) -> Group | None:
        for group in reversed(self.groups[-4:]):
            if not group.closed and group.kind == "rows" and group.axis == axis and group.full_shape == shape \
                    and len(group.reductions) < MAX_REDUCTIONS:
                return group
        return None

    def _open_fits(self, value: Pointwise) -> dict:
        """Open groups that can also compute ``value`` (shared loads, no extra launch): the latest wins."""
        fitting = {}
        for group in self.groups[-4:]:  # recent groups only: an old open group has nothing left to share
            if group.closed or group.kind == "matmul":
                continue
            level = self._fit(group, value)
            if level:
                fitting[group.index] = (group, level)
        return fitting

    def _row_broadcasts(self, value: Value, group: Group) -> bool:
        """A per-row value used against the full tensor must line up with the reduced dims."""
        if group.axis.groups is not None:
            return value.shape is None
        if value.shape is None:
            return False
        keep = keepdim_shape(group.full_shape, group.axis.dims)
        padded = (1,) * (len(keep) - len(value.shape)) + tuple(value.shape)
        return padded == keep

    def _can_absorb(self, group: Group, value: Reduce) -> bool:
        source = value.input
        if group.level.get(source.uid) != "full" or source.shape != group.full_shape:
            return False
        if group.kind == "pointwise":
            return self.options.fuse_prologue
        if group.kind == "rows":
            return group.axis == value.axis and len(group.reductions) < MAX_REDUCTIONS
        return False

    # -- bookkeeping -------------------------------------------------------------------------------

    def _new_group(self, kind: str, shape: tuple) -> Group:
        group = Group(index=len(self.groups), kind=kind, full_shape=shape)
        self.groups.append(group)
        return group

    def _add(self, group: Group, value: Value, level: str, position: int) -> None:
        group.add(value, level, position)
        self.group_of[value.uid] = group

    def _consume_outside(self, value: Value) -> None:
        group = self.group_of[value.uid]
        if group.level.get(value.uid) == "row" and group.axis.groups is not None:
            raise NoRule("GroupNorm statistics used outside the norm")
        self.result.materialized.add(value.uid)
        group.closed = True

    def _finish(self) -> None:
        if not self.groups and not any(kept.library for _, kept in self.kept_positions):
            raise NoRule("this model: every operation in it stays in PyTorch (" + _kept_summary(self.kept_positions)
                         + "), so there is nothing to write as a Triton kernel")
        for group in self.groups:
            group.outputs = [m for m in group.members if m.uid in self.result.materialized]
        ordered = [(g.position, 1, g) for g in self.groups] + [(p, 0, k) for p, k in self.kept_positions]
        self.result.steps = [item for _, _, item in sorted(ordered, key=lambda entry: (entry[0], entry[1]))]


def _flatten(structure: Any) -> list:
    if isinstance(structure, (tuple, list)):
        return [leaf for item in structure for leaf in _flatten(item)]
    if isinstance(structure, dict):
        return [leaf for item in structure.values() for leaf in _flatten(item)]
    return [structure]


def _kept_summary(kept: list) -> str:
    names = []
    for _, item in kept:
        node = item.node
        if node.op == "call_module":
            names.append(str(node.target))
        elif node.op in ("call_function", "call_method"):
            names.append(getattr(node.target, "__name__", str(node.target)))
    unique = list(dict.fromkeys(names))
    return ", ".join(unique[:6]) or "no operations"
