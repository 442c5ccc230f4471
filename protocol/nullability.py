"""Null checks for decoded requests: a string, bytes or array field sent as null where Kafka forbids it.

kafka-python decodes a length of -1 as None for every string, bytes and array field, whether or not
the message's JSON schema lists the field in `nullableVersions`. Kafka rejects such a request while
parsing it ("non-nullable field ... was serialized as null") and closes the connection. The codec runs
`null_field` on every request it decodes, so handlers never meet a None that their API forbids.

A check plan is built once per (message struct, version): only the fields that can decode to None
(strings, bytes, records, arrays) and the struct arrays that hold such fields are visited.
"""

from __future__ import annotations

from typing import Any

# (attribute name, null allowed, plan of each item's fields (struct arrays), items may be null ([]string))
_Entry = tuple[str, bool, "tuple[_Entry, ...] | None", bool]
_Plan = tuple[_Entry, ...]

_NULLABLE_TYPES = frozenset(("string", "bytes", "records"))
_plans: dict[tuple[int, int], _Plan] = {}


def plan_for(struct: Any, version: int) -> _Plan:
    """The fields of `struct` (a kafka-python StructField) to check at `version`, cached."""
    key = (id(struct), version)
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = _build(struct, version)
    return plan


def _build(struct: Any, version: int) -> _Plan:
    """Only entries that check something: a nullable string, or an array whose items need no check,
    costs nothing at run time."""
    entries: list[_Entry] = []
    for field in struct.untagged_fields(version):
        nullable = bool(field.nullable_for_version_q(version))
        if field.is_struct_array():
            child = _build(field.array_of, version) or None
            if child is not None or not nullable:
                entries.append((field.name, nullable, child, False))
        elif field.is_struct():
            child = _build(field, version)
            if child:  # a struct is never None unless nullable: only its fields need checking
                entries.append((field.name, True, child, False))
        elif field.is_array():
            items_checked = field.array_of.type_str in _NULLABLE_TYPES
            if items_checked or not nullable:
                entries.append((field.name, nullable, None, items_checked))
        elif field.type_str in _NULLABLE_TYPES and not nullable:
            entries.append((field.name, False, None, False))
    return tuple(entries)


def null_field(obj: Any, plan: _Plan) -> str | None:
    """The path of the first field of `obj` that is null where its schema forbids it, or None."""
    for name, nullable, child, items_checked in plan:
        value = getattr(obj, name)
        if value is None:
            if nullable:
                continue
            return name
        if child is not None:
            path = _null_in_child(name, value, child)
            if path is not None:
                return path
        elif items_checked:
            for i, item in enumerate(value):
                if item is None:
                    return f"{name}[{i}]"
    return None


def _null_in_child(name: str, value: Any, child: _Plan) -> str | None:
    """`null_field` of a nested struct, or of each struct of an array."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            path = null_field(item, child)
            if path is not None:
                return f"{name}[{i}].{path}"
        return None
    path = null_field(value, child)
    return None if path is None else f"{name}.{path}"
