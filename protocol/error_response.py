"""A response that fails a whole request with one error, for any API kafka-python has a schema of.

Kafka builds it per request class (`AbstractRequest.getErrorResponse`): `error_answers` holds those
answers, API by API. An API it does not list (one kafkito does not serve, answered
UNSUPPORTED_VERSION) is answered from the schemas: the top-level error code when the response has one,
otherwise the response mirrors the request's entries with the error on each (arrays paired by name,
or when each side has exactly one at that level; fields of the same name copied).
"""

from __future__ import annotations

from typing import Any

from kafkito.protocol.codec import build_response, response_class
from kafkito.protocol.error_answers import BUILDERS, Failure


def error_response(api_key: int, version: int, request: Any, error: int, message: str | None = None) -> Any:
    """The response of `version` answering `request` with `error` as Kafka does, or None when the
    request takes no response (Produce with acks=0: Kafka closes the connection instead).

    `message` is the failure's own text, None when it has none beyond the error's.
    """
    builder = BUILDERS.get(api_key)
    struct = response_class(api_key, version)._struct
    if builder is None:
        if _field(struct, "error_code", version) is not None:
            fields: dict[str, Any] = {"error_code": error}
            if _field(struct, "error_message", version) is not None:
                fields["error_message"] = message
            return build_response(api_key, version, **fields)
        return build_response(api_key, version, **_mirror(struct, request, version, error, message))
    values = builder(request, version, Failure.of(error, message))
    if values is None:
        return None
    return build_response(api_key, version, **_fit(struct, values, version))


def _fit(struct: Any, values: dict[str, Any], version: int) -> dict[str, Any]:
    """`values` without the fields `version` of `struct` lacks (at any depth)."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        field = struct.fields.get(name)
        if field is None or not field.for_version_q(version):
            continue
        if field.is_struct_array() and value is not None:
            value = [_fit(field, v, version) for v in value]
        elif field.is_struct() and isinstance(value, dict):
            value = _fit(field, value, version)
        out[name] = value
    return out


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


def mirror(struct: Any, source: Any, version: int, error: int, message: str | None) -> dict[str, Any]:
    """The fields of one response struct answering `source` (a request struct, or None), from the
    schemas alone: what a per-entry refusal adds beside the handler's answer for the other entries."""
    return _mirror(struct, source, version, error, message)


def _mirror(struct: Any, source: Any, version: int, error: int, message: str | None) -> dict[str, Any]:
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
