"""The codec's null check follows Kafka's schemas: forbidden nulls are malformed, allowed ones pass."""

from __future__ import annotations

from typing import Any

import pytest

from kafkito.broker.handlers import supported_versions
from kafkito.protocol.codec import (
    REQUESTS,
    MalformedRequest,
    decode_request,
    is_flexible,
    parse_request_header,
    request_class,
)
from kafkito.protocol.nullability import null_check
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


def test_the_path_names_the_element_that_is_null_not_the_first() -> None:
    request = sample_request(19, 7)  # CreateTopics: topics[].configs[].name is required
    request.topics.append(sample_request(19, 7).topics[0])  # equal to the first, not the same object
    request.topics[1].configs.append(sample_request(19, 7).topics[0].configs[0])
    _decode(request, 19, 7)
    request.topics[1].configs[1].name = None
    with pytest.raises(MalformedRequest, match=r"non-nullable field topics\[1\]\.configs\[1\]\.name "):
        _decode(request, 19, 7)
    groups = sample_request(15, 5)  # DescribeGroups: groups is a []string whose items are required
    groups.groups = ["a", "b", None]
    with pytest.raises(MalformedRequest, match=r"non-nullable field groups\[2\] "):
        _decode(groups, 15, 5)


def test_the_check_of_every_api_kafka_python_knows_finds_each_forbidden_null() -> None:
    """Beyond the APIs served: every shape of schema (a nullable struct, like DescribeTopicPartitions'
    cursor, too) compiles to a check that passes the sample and names each forbidden null."""
    for key, messages in REQUESTS.items():
        for version in range(messages.min_version, messages.max_version + 1):
            check = null_check(request_class(key, version), version)
            paths = list(null_paths(key, version))
            assert (check is None) == (not paths)
            if check is None:
                continue
            assert check(sample_request(key, version)) is None
            for path in paths:
                found = check(sample_request(key, version, null=path))
                assert found is not None and found.replace("[0]", "") == path.replace("[0]", ""), (key, path)
