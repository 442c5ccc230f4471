"""The answer to a request failed as a whole, for every served API and version, is where Kafka's
getErrorResponse puts the error: the table below says, per API, which response error codes carry it and
which request entries they answer (one each), written from Kafka's request classes and checked against
them byte for byte by test_error_answers_vs_kafka.py (which needs a JVM)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kafkito.broker.handlers import supported_versions
from kafkito.protocol.codec import RESPONSES, build_request
from kafkito.protocol.error_response import error_response
from kafkito.protocol.errors import DEFAULT_MESSAGES, ErrorCode
from tests.protocol.samples import sample_request

E = ErrorCode
DENIED = E.CLUSTER_AUTHORIZATION_FAILED
TOP: dict[str, str | None] = {"error_code": None}  # only the top-level error code
Where = dict[str, str | None]  # response path of an error code -> request path of the entries it answers


def _fetch(v: int) -> Where:
    per_partition = {"responses.partitions.error_code": "topics.partitions"}
    if v < 7:
        return per_partition
    return TOP if v >= 13 else {**TOP, **per_partition}


def _offset_fetch(v: int) -> Where:
    if v < 2:
        return {"topics.partitions.error_code": "topics.partition_indexes"}
    return TOP if v < 8 else {"groups.error_code": "groups"}


def _add_partitions(v: int) -> Where:
    if v >= 4:
        return TOP
    by_partition = "results_by_topic_v3_and_below.results_by_partition.partition_error_code"
    return {by_partition: "v3_and_below_topics.partitions"}


def _elect(v: int) -> Where:
    per_partition = {"replica_election_results.partition_result.error_code": "topic_partitions.partitions"}
    return per_partition if v == 0 else {**TOP, **per_partition}


def _metadata(v: int) -> Where:
    per_topic = {"topics.error_code": "topics"}
    return {**TOP, **per_topic} if v >= 13 else per_topic  # v13 added the top-level error code


def _same(where: Where) -> Callable[[int], Where]:
    return lambda v: where


WHERE: dict[int, Callable[[int], Where]] = {
    0: _same({"responses.partition_responses.error_code": "topic_data.partition_data"}),
    1: _fetch,
    2: _same({"topics.partitions.error_code": "topics.partitions"}),
    3: _metadata,
    8: _same({"topics.partitions.error_code": "topics.partitions"}),
    9: _offset_fetch,
    10: lambda v: TOP if v < 4 else {"coordinators.error_code": "coordinator_keys"},
    15: _same({"groups.error_code": "groups"}),
    19: _same({"topics.error_code": "topics"}),
    20: lambda v: {"responses.error_code": "topic_names" if v < 6 else "topics"},
    21: _same({"topics.partitions.error_code": "topics.partitions"}),
    23: _same({"topics.partitions.error_code": "topics.partitions"}),
    24: _add_partitions,
    27: _same({"markers.topics.partitions.error_code": "markers.topics.partition_indexes"}),
    28: _same({"topics.partitions.error_code": "topics.partitions"}),
    30: _same({"results.error_code": "creations"}),
    31: _same({"filter_results.error_code": "filters"}),
    32: _same({"results.error_code": "resources"}),
    33: _same({"responses.error_code": "resources"}),
    34: _same({"results.partitions.error_code": "dirs.topics.partitions"}),
    35: lambda v: TOP if v >= 3 else {},  # before v3 Kafka's error answer is an empty one
    37: _same({"results.error_code": "topics"}),
    42: _same({"results.error_code": "groups_names"}),
    43: _elect,
    44: _same({"responses.error_code": "resources"}),
    45: _same({**TOP, "responses.partitions.error_code": "topics.partitions"}),
    49: _same({"entries.error_code": "entries"}),
    50: _same({**TOP, "results.error_code": "users"}),
    51: _same({"results.error_code": "upsertions"}),  # the sample names one user, in both lists
    61: _same({"topics.partitions.error_code": "topics.partition_indexes"}),
    65: _same({"transaction_states.error_code": "transactional_ids"}),
    69: _same({"groups.error_code": "group_ids"}),
    75: _same({"topics.error_code": "topics"}),
    77: _same({"groups.error_code": "group_ids"}),
    89: _same({"groups.error_code": "group_ids"}),
    90: _same({"groups.error_code": "groups"}),
}
# Every other served API answers with its top-level error code only.


def _every() -> list[tuple[int, int]]:
    return [(key, v) for key, lo, hi in supported_versions(False) for v in range(lo, hi + 1)]


def _walk(value: Any, path: str) -> Iterator[Any]:
    """The values at a dotted path, through every element of the lists on the way."""
    if isinstance(value, list):
        for item in value:
            yield from _walk(item, path)
        return
    if not path:
        yield value
        return
    head, _, rest = path.partition(".")
    inner = getattr(value, head, None)
    if inner is not None:
        yield from _walk(inner, rest)


def _error_codes(response: Any, version: int | None = None, prefix: str = "") -> Iterator[tuple[str, int]]:
    """(path, value) of every error code in a decoded response."""
    version = response.version if version is None else version
    for name, field in response._struct.fields.items():
        if not field.for_version_q(version):
            continue
        value = getattr(response, name, None)
        if name.endswith("error_code") and isinstance(value, int):
            yield prefix + name, value
        elif field.is_struct_array() or field.is_struct():
            for item in value if isinstance(value, list) else [value] if value is not None else []:
                yield from _error_codes(item, version, f"{prefix}{name}.")


def _decoded(api_key: int, version: int, response: Any) -> Any:
    """The response as a client reads it (ApiVersions: as built, kafka-python reads its v3+ bodies
    only behind the v0 header the broker frames them with)."""
    if api_key == 18:
        return response
    response.with_header(correlation_id=7)
    return RESPONSES[api_key].decode(bytes(response.encode(header=True)), version=version, header=True)


@pytest.mark.parametrize(("api_key", "version"), _every())
def test_the_error_lands_where_kafka_puts_it(api_key: int, version: int) -> None:
    request = sample_request(api_key, version)
    response = _decoded(api_key, version, error_response(api_key, version, request, DENIED))
    where = WHERE.get(api_key, _same(TOP))(version)
    expected = Counter(
        {path: 1 if source is None else len(list(_walk(request, source))) for path, source in where.items()}
    )
    carried = Counter(path for path, code in _error_codes(response) if code == DENIED)
    assert carried == +expected
    assert all(code in (E.NONE, DENIED) for _, code in _error_codes(response))


def test_alter_user_scram_credentials_answers_each_user_once_in_order() -> None:
    request = build_request(
        51,
        0,
        deletions=[{"name": "zoe", "mechanism": 1}, {"name": "bob", "mechanism": 2}],
        upsertions=[
            {"name": "bob", "mechanism": 1, "iterations": 4096, "salt": b"s", "salted_password": b"p"}
        ],
    )
    response = _decoded(51, 0, error_response(51, 0, request, DENIED))
    assert [(r.user, r.error_code, r.error_message) for r in response.results] == [
        ("bob", DENIED, None),
        ("zoe", DENIED, None),
    ]


def test_messages_are_kafkas_own_text_where_kafka_sends_it_and_none_elsewhere() -> None:
    configs = build_request(
        32, 4, resources=[{"resource_type": 2, "resource_name": "t", "configuration_keys": None}]
    )
    described = _decoded(32, 4, error_response(32, 4, configs, DENIED))
    assert [(r.resource_name, r.error_message) for r in described.results] == [
        ("t", DEFAULT_MESSAGES[DENIED])
    ]
    find = _decoded(
        10, 4, error_response(10, 4, build_request(10, 4, key_type=0, coordinator_keys=["g"]), DENIED)
    )
    assert [(c.key, c.error_message, c.node_id) for c in find.coordinators] == [
        ("g", DEFAULT_MESSAGES[DENIED], -1)
    ]
    created = _decoded(19, 7, error_response(19, 7, sample_request(19, 7), DENIED, DEFAULT_MESSAGES[DENIED]))
    assert created.topics[0].error_message is None  # the error's own text is dropped
    failed = _decoded(19, 7, error_response(19, 7, sample_request(19, 7), E.UNKNOWN_SERVER_ERROR, "boom"))
    assert failed.topics[0].error_message is None  # never an internal error's text
    refused = _decoded(19, 7, error_response(19, 7, sample_request(19, 7), DENIED, "not for you"))
    assert refused.topics[0].error_message == "not for you"


def test_produce_with_acks_0_has_no_error_answer() -> None:
    request = sample_request(0, 9)
    request.acks = 0
    assert error_response(0, 9, request, DENIED) is None
