"""Null checks for decoded requests: a string, bytes or array field sent as null where Kafka forbids it.

kafka-python decodes a length of -1 as None for every string, bytes and array field, whether or not
the message's JSON schema lists the field in `nullableVersions`. Kafka rejects such a request while
parsing it ("non-nullable field ... was serialized as null") and closes the connection. The codec runs
`null_check` on every request it decodes, so handlers never meet a None that their API forbids.

A check plan is built once per (message struct, version): only the fields that can decode to None
(strings, bytes, records, arrays) and the structs that hold such fields are visited. The plan is then
compiled into a plain Python function (straight-line attribute reads, one loop per struct array), as
`dataclasses` and `namedtuple` build their methods: the check runs on every request, and interpreting
the plan cost about as much again as the reads themselves.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

# (attribute name, null allowed, plan of the struct's fields (struct or struct array), items may be
# null ([]string), the child is an array of structs rather than one struct)
_Entry = tuple[str, bool, "tuple[_Entry, ...] | None", bool, bool]
_Plan = tuple[_Entry, ...]
Check = Callable[[Any], "str | None"]  # the path of the first forbidden null, or None

_NULLABLE_TYPES = frozenset(("string", "bytes", "records"))
_plans: dict[tuple[int, int], _Plan] = {}
_checks: dict[Any, Check | None] = {}  # by versioned request class


def plan_for(struct: Any, version: int) -> _Plan:
    """The fields of `struct` (a kafka-python StructField) to check at `version`, cached."""
    key = (id(struct), version)
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = _build(struct, version)
    return plan


def null_check(cls: Any, version: int) -> Check | None:
    """The compiled check of request class `cls` (one version's) at `version`, cached by the class;
    None when nothing in it can be null wrongly."""
    try:
        return _checks[cls]
    except KeyError:
        plan = plan_for(cls._struct, version)
        check = _checks[cls] = compile_plan(plan) if plan else None
        return check


def _build(struct: Any, version: int) -> _Plan:
    """Only entries that check something: a nullable string, or an array whose items need no check,
    costs nothing at run time."""
    entries: list[_Entry] = []
    for field in struct.untagged_fields(version):
        nullable = bool(field.nullable_for_version_q(version))
        if field.is_struct_array():
            child = _build(field.array_of, version) or None
            if child is not None or not nullable:
                entries.append((field.name, nullable, child, False, True))
        elif field.is_struct():
            child = _build(field, version)
            if child:  # a struct is never None unless nullable: only its fields need checking
                entries.append((field.name, True, child, False, False))
        elif field.is_array():
            items_checked = field.array_of.type_str in _NULLABLE_TYPES
            if items_checked or not nullable:
                entries.append((field.name, nullable, None, items_checked, False))
        elif field.type_str in _NULLABLE_TYPES and not nullable:
            entries.append((field.name, False, None, False, False))
    return tuple(entries)


def compile_plan(plan: _Plan) -> Check:
    """The plan as one function of the decoded request: the path of its first forbidden null, or None."""
    lines = ["def check(o0):"]
    _emit(plan, 0, "", 1, lines)
    lines.append("    return None")
    namespace: dict[str, Any] = {"_index": _index}
    exec("\n".join(lines), namespace)  # the source is built from schema field names only
    check: Check = namespace["check"]
    return check


def _index(items: list[Any], item: Any) -> int:
    """Where `item` itself is in `items` (decoded structs may compare equal to one another)."""
    return next(i for i, candidate in enumerate(items) if candidate is item)


def _emit(plan: _Plan, depth: int, prefix: str, indent: int, lines: list[str]) -> None:
    """Lines checking object `o{depth}`; `prefix`: the f-string of its path (`topics[{_index(v0, o1)}].`)."""
    pad = "    " * indent
    obj, value, inner = f"o{depth}", f"v{depth}", depth + 1
    for name, nullable, child, items_checked, is_array in plan:
        if not name.isidentifier():  # it goes into source code
            raise ValueError(f"unexpected schema field name {name!r}")
        read = f"getattr({obj}, {name!r})" if keyword.iskeyword(name) else f"{obj}.{name}"
        if child is None and not items_checked:  # a plain required field: one read, one test
            lines.append(f'{pad}if {read} is None: return f"{prefix}{name}"')
            continue
        lines.append(f"{pad}{value} = {read}")
        body = pad
        if nullable:
            lines.append(f"{pad}if {value} is not None:")
            body = pad + "    "
        else:
            lines.append(f'{pad}if {value} is None: return f"{prefix}{name}"')
        if child is not None and is_array:
            # A plain loop (enumerate costs more than the checks); the index is found on failure only.
            lines.append(f"{body}for o{inner} in {value}:")
            _emit(child, inner, f"{prefix}{name}[{{_index({value}, o{inner})}}].", len(body) // 4 + 1, lines)
        elif child is not None:
            lines.append(f"{body}o{inner} = {value}")
            _emit(child, inner, f"{prefix}{name}.", len(body) // 4, lines)
        else:
            lines.append(f'{body}if None in {value}: return f"{prefix}{name}[{{{value}.index(None)}}]"')
