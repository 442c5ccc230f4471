"""Every API Kafka 4.4 serves to clients, at each version it serves: a request with every field at its
schema default (mostly empty, so an error path or an empty answer), a version one above Kafka's
highest, and a null where the schema forbids one. One scenario per API, generated from Kafka's specs."""

from __future__ import annotations

from typing import Any

from kafkito.protocol.codec import MESSAGES, REQUESTS, build_request
from tests.conformance.framework import Side, scenario
from tests.conformance.kafka_specs import api_specs

# Defaults that would make a request wait for nothing: an acks=0 Produce gets no answer.
OVERRIDES: dict[int, dict[str, Any]] = {0: {"acks": 1, "timeout_ms": 1000}}
# Requests Kafka 4.4 leaves unanswered when empty (AddPartitionsToTxn v4+ with no transactions): how
# long to wait before recording "no answer".
SHORT_WAIT: dict[int, float] = {24: 2.0}


def codec_versions(api_key: int) -> tuple[int, int] | None:
    if api_key not in MESSAGES:
        return None
    cls = REQUESTS[api_key]
    return cls.min_version, cls.max_version


def _default_fields(api_key: int, version: int) -> dict[str, Any]:
    struct = REQUESTS[api_key]._struct
    fields = _struct_defaults(struct._fields, version)
    return fields | {
        k: v for k, v in OVERRIDES.get(api_key, {}).items() if struct.fields[k].for_version_q(version)
    }


def _struct_defaults(fields: Any, version: int) -> dict[str, Any]:
    """A value for each struct (not array) field the version carries and must not be null: the codec
    defaults scalars and arrays, not structs (StreamsGroupTopologyDescriptionUpdate's TopologyDescription)."""
    return {
        f.name: _struct_defaults(f._fields, version)
        for f in fields
        if f.is_struct()
        and not f.is_array()
        and f.for_version_q(version)
        and not f.tagged_field_q(version)
        and not f.nullable_for_version_q(version)
    }


def first_non_nullable(api_key: int, version: int) -> str | None:
    """The first top-level string or array field that must not be null at `version`."""
    for f in REQUESTS[api_key]._struct._fields:
        if not f.for_version_q(version) or f.tagged_field_q(version) or f.nullable_for_version_q(version):
            continue
        if f.is_array() or f.type_str in ("string", "bytes"):
            return str(f.name)
    return None


def sweep(api_key: int) -> None:
    def run(side: Side) -> None:
        served = side.kafka_versions.get(api_key)
        codec = codec_versions(api_key)
        if codec is None:
            side.note(f"api {api_key}", {"not compared": "kafka-python's codec has no schema of this API"})
            return
        low, high = served if served is not None else (codec[0], codec[0])
        for v in range(low, high + 1):
            if not codec[0] <= v <= codec[1]:
                side.note(f"v{v}", {"not compared": f"the codec's versions are {codec[0]}-{codec[1]}"})
                continue
            side.request(
                api_key, v, "defaults", f"v{v}", SHORT_WAIT.get(api_key), **_default_fields(api_key, v)
            )
        if served is not None:
            side.send_raw(api_key, high + 1, b"", "one above Kafka's highest", conn="too-new")
            side.recv("too-new")
        top = min(high, codec[1])
        field = first_non_nullable(api_key, top)
        if field is not None and top >= codec[0]:
            request = build_request(api_key, top, **{**_default_fields(api_key, top), field: None})
            side.send_raw(api_key, top, bytes(request.encode()), f"null {field}", conn="null")
            side.recv("null")

    return run


for _key, _spec in api_specs().items():
    if _spec.client_facing:
        scenario("api", f"sweep-{_key:02d}-{_spec.name}")(sweep(_key))
