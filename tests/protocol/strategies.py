"""Hypothesis strategies that build any kafka-python request of any version from its JSON schema."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import strategies as st

_INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


def _scalar(type_str: str) -> st.SearchStrategy[Any]:
    if type_str in _INTS:
        bits = _INTS[type_str]
        return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if type_str == "uint16":
        return st.integers(0, 2**16 - 1)
    if type_str == "float64":
        return st.floats(allow_nan=False)
    if type_str == "bool":
        return st.booleans()
    if type_str == "string":
        return _text
    if type_str in ("bytes", "records"):
        return st.binary(max_size=24)
    if type_str == "uuid":
        return st.builds(lambda b: uuid.UUID(bytes=b), st.binary(min_size=16, max_size=16))
    raise LookupError(type_str)


def struct_values(struct: Any, version: int) -> st.SearchStrategy[dict[str, Any]]:
    """A dict of field name -> value for every field of `struct` present in `version`."""
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for field in struct._fields:
        if not field.for_version_q(version):
            continue
        strat = _field(field, version)
        if strat is None:
            continue
        if field.nullable_for_version_q(version):
            strat = st.none() | strat
        parts[field.name] = strat
    return st.fixed_dictionaries(parts)


def _data_class(field: Any) -> Any:
    """kafka-python creates nested data classes on first use; make one if it has not yet."""
    if field.data_class is None:
        from kafka.protocol.data_container import DataContainer

        field.set_data_class(type(field.type_str, (DataContainer,), {"_struct": field}))
    return field.data_class


def _field(field: Any, version: int) -> st.SearchStrategy[Any] | None:
    if field.is_struct_array():
        item = struct_values(field, version).map(lambda d: _data_class(field)(**d))
        return st.lists(item, max_size=2)
    if field.is_struct():
        return struct_values(field, version).map(lambda d: _data_class(field)(**d))
    type_str = field.type_str
    if type_str.startswith("[]"):
        try:
            return st.lists(_scalar(type_str[2:]), max_size=3)
        except LookupError:
            return None
    try:
        return _scalar(type_str)
    except LookupError:
        return None


def request_of(cls: Any, version: int) -> st.SearchStrategy[Any]:
    versioned = cls[version]
    return struct_values(cls._struct, version).map(lambda d: versioned(**d))
