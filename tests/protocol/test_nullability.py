"""The codec's null check follows Kafka's schemas: forbidden nulls are malformed, allowed ones pass."""

from __future__ import annotations

from typing import Any

import pytest

from kafkito.broker.handlers import supported_versions
from kafkito.protocol.codec import MalformedRequest, decode_request, is_flexible, parse_request_header
from tests.protocol.samples import frame, null_paths, sample_request

VERSIONS = [(key, v) for key, lo, hi in supported_versions() for v in range(lo, hi + 1)]


def _decode(request: Any, key: int, version: int) -> Any:
    body = frame(request)[4:]
    return decode_request(body, parse_request_header(body, is_flexible(key, version)))


@pytest.mark.parametrize(("key", "version"), VERSIONS)
def test_each_forbidden_null_is_malformed_and_named(key: int, version: int) -> None:
    _decode(sample_request(key, version), key, version)  # the sample itself is fine
    for path in null_paths(key, version):
        if (key, version, path) == (3, 0, "topics"):
            continue  # kafka-python writes a null v0 topic list as [] ("all topics"): no null on the wire
        with pytest.raises(MalformedRequest, match="non-nullable field"):
            _decode(sample_request(key, version, null=path), key, version)


@pytest.mark.parametrize(
    ("key", "version", "fields"),
    [
        (0, 9, {"transactional_id": None}),  # Produce: nullable since v3
        (3, 12, {"topics": None}),  # Metadata: null = all topics since v1
        (9, 7, {"topics": None}),  # OffsetFetch: null = all of the group's partitions since v2
        (12, 4, {"group_instance_id": None}),  # Heartbeat: static membership is optional
    ],
)
def test_allowed_nulls_decode(key: int, version: int, fields: dict[str, object]) -> None:
    request = sample_request(key, version)
    for name, value in fields.items():
        setattr(request, name, value)
    decoded = _decode(request, key, version)
    for name in fields:
        assert getattr(decoded, name) is None


def test_a_null_record_set_is_allowed_but_a_null_topic_name_is_not() -> None:
    request = sample_request(0, 9)
    request.topic_data[0].partition_data[0].records = None
    assert _decode(request, 0, 9).topic_data[0].partition_data[0].records is None
    request.topic_data[0].name = None
    with pytest.raises(MalformedRequest, match=r"topic_data\[0\]\.name"):
        _decode(request, 0, 9)
