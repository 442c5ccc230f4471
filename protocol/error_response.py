"""A response that refuses a whole request with one error, for any API kafka-python has a schema of.

Kafka builds such a response per API (`AbstractRequest.getErrorResponse`); this builds it from the
schemas: a top-level error code carries the error when the response has one; otherwise the response
mirrors the request's entries (a topic, a partition, an ACL creation...) with the error on each.
Arrays are paired by name, or when each side has exactly one at that level; fields of the same name
are copied (names, indexes); everything else keeps its schema default.
"""

from __future__ import annotations

from typing import Any

from kafkito.protocol.codec import build_response, response_class


def error_response(api_key: int, version: int, request: Any, error: int, message: str | None) -> Any:
    """The response of `version` answering every part of `request` with `error`."""
    struct = response_class(api_key, version)._struct
    if _field(struct, "error_code", version) is not None:
        fields: dict[str, Any] = {"error_code": error}
        if _field(struct, "error_message", version) is not None:
            fields["error_message"] = message
        return build_response(api_key, version, **fields)
    return build_response(api_key, version, **_mirror(struct, request, version, error, message))


def _field(struct: Any, name: str, version: int) -> Any:
    field = struct.fields.get(name)
    return field if field is not None and field.for_version_q(version) else None


def _arrays(struct: Any, version: int) -> dict[str, Any]:
    """The struct arrays of a response struct that can carry an error code (at any depth)."""
    return {
        n: f
        for n, f in struct.fields.items()
        if f.for_version_q(version) and f.is_struct_array() and _carries_error(f, version)
    }


def _carries_error(struct: Any, version: int) -> bool:
    for name, field in struct.fields.items():
        if not field.for_version_q(version):
            continue
        if name == "error_code" or (field.is_struct_array() and _carries_error(field, version)):
            return True
    return False


def _mirror(struct: Any, source: Any, version: int, error: int, message: str | None) -> dict[str, Any]:
    """The fields of one response struct answering `source` (a request struct, or None)."""
    source_fields = {} if source is None else {
        n: f for n, f in type(source)._struct.fields.items() if f.for_version_q(version)
    }  # fmt: skip
    source_arrays = {n: f for n, f in source_fields.items() if f.is_struct_array()}
    arrays = _arrays(struct, version)
    out: dict[str, Any] = {}
    for name, field in struct.fields.items():
        if not field.for_version_q(version):
            continue
        if name == "error_code":
            out[name] = error
        elif name == "error_message":
            out[name] = message
        elif field.is_struct_array():
            pair = name if name in source_arrays else None
            if pair is None and name in arrays and len(arrays) == 1 and len(source_arrays) == 1:
                pair = next(iter(source_arrays))
            entries = getattr(source, pair) if pair is not None else None
            out[name] = [_mirror(field, e, version, error, message) for e in entries or ()]
        elif name in source_fields and not field.is_struct() and not source_fields[name].is_struct():
            out[name] = getattr(source, name)
    return out
