"""kafkito's answer to a request failed as a whole is Kafka 4.4's, byte for byte, for every API and version
both serve: Kafka's own request classes (kafka-clients on the reference classpath) parse the request
kafkito's sample encodes, `getErrorResponse` answers it, and the response serialized at the request's
version is compared with what `protocol.error_response.error_response` builds, for each error kafkito
answers whole requests with (refusals, failures, deadlines, unserved versions; with and without a message
of its own).

The oracle is tests/kafka_reference/ErrorResponses.java, run once for the module: it needs Java 17 and
`make install-clients` (so the module is marked slow: make test-fast runs without a JVM). The versions
kafkito serves below Kafka 4's minimums (KIP-896) have no Kafka 4.4 class to ask and are left to
test_error_answers.py's table.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from kafkito.protocol.codec import RESPONSES, build_request
from kafkito.protocol.error_response import error_response
from kafkito.protocol.errors import ErrorCode
from tests.protocol.samples import sample_request
from tests.protocol_versions.test_every_version import _every
from tests.support.kafka_reference import REPO, classpath, java

E = ErrorCode
ORACLE = REPO / "tests" / "kafka_reference" / "ErrorResponses.java"
# (error, the failure's own message): what kafkito answers a whole request with (security/request_checks,
# dispatch's handler failures and deadlines, the unserved-version answer).
FAILURES: tuple[tuple[ErrorCode, str | None], ...] = (
    (E.CLUSTER_AUTHORIZATION_FAILED, None),
    (E.CLUSTER_AUTHORIZATION_FAILED, "Denied by a test"),
    (E.TOPIC_AUTHORIZATION_FAILED, None),
    (E.UNKNOWN_SERVER_ERROR, "an internal failure"),
    (E.COORDINATOR_NOT_AVAILABLE, None),
    (E.REQUEST_TIMED_OUT, None),
    (E.UNSUPPORTED_VERSION, "API 1 version 99 is not served"),
)
# Kafka's parsers refuse an ACL request naming the UNKNOWN (0) enum values the samples default to.
_ANY_ACL = {"resource_type_filter": 1, "pattern_type_filter": 1, "operation": 1, "permission_type": 1}
_VALID_ACLS: dict[int, tuple[str | None, dict[str, int]]] = {
    29: (None, _ANY_ACL),  # DescribeAcls
    30: ("creations", {"resource_type": 2, "resource_pattern_type": 3, "operation": 2, "permission_type": 3}),
    31: ("filters", _ANY_ACL),  # DeleteAcls
}


def _marker(producer_id: int, *topics: tuple[str, list[int]]) -> dict[str, Any]:
    return {
        "producer_id": producer_id,
        "producer_epoch": 0,
        "transaction_result": True,
        "coordinator_epoch": 0,
        "topics": [{"name": name, "partition_indexes": indexes} for name, indexes in topics],
    }


# WriteTxnMarkers requests whose answer Kafka orders by its hash maps: several producer ids (one
# repeated), topics named twice, repeated partitions, and enough partitions to grow the maps' tables.
MARKERS: list[list[dict[str, Any]]] = [
    [_marker(7, ("b", [1, 0]), ("a", [2])), _marker(3, ("zz", [5]))],
    [_marker(7, ("b", [1])), _marker(100, ("t", [0])), _marker(7, ("c", [9, 9]))],
    [_marker(-1, ("b", [1]), ("b", [0]))] + [_marker(p, ("t", [0])) for p in (2**40 + 5, -(2**63), 17, 1)],
    [_marker(5, *((f"topic-{t}", list(range(t, 70, 3))) for t in range(12)), ("topic-é", [64, 0]))],
    [],
]


def _sample(api_key: int, version: int) -> Any:
    request = sample_request(api_key, version)
    path, values = _VALID_ACLS.get(api_key, (None, {}))
    for entry in getattr(request, path) if path else [request]:
        for name, value in values.items():
            if hasattr(entry, name):
                setattr(entry, name, value)
    return request


def _no_acks(version: int) -> Any:
    request = sample_request(0, version)
    request.acks = 0
    return request


def _line(api_key: int, version: int, request: Any, error: ErrorCode, message: str | None) -> str:
    assert message is None or "+" not in message  # the oracle reads '+' as a space
    text = "-" if message is None else message.replace(" ", "+")
    return f"{api_key} {version} {int(error)} {text} {bytes(request.encode()).hex()}"


@pytest.fixture(scope="module")
def kafka_answers() -> Iterator[dict[str, str]]:
    """Each oracle input line -> Kafka's answer ("ok <hex>", "none" or "fail <why>")."""
    lines = [
        _line(key, version, _sample(key, version), error, message)
        for key, version in _every(True)
        for error, message in FAILURES
    ]
    lines += [_line(0, v, _no_acks(v), E.CLUSTER_AUTHORIZATION_FAILED, None) for v in (3, 13)]
    lines += [_line(27, v, build_request(27, v, markers=m), E.CLUSTER_AUTHORIZATION_FAILED, None)
              for m in MARKERS for v in (1, 2)]  # fmt: skip
    run = subprocess.run(
        [java(), "-cp", classpath(), str(ORACLE)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    answers = run.stdout.splitlines()
    assert len(answers) == len(lines), run.stderr
    yield dict(zip(lines, answers, strict=True))


def _compare(kafka_answers: dict[str, str], api_key: int, version: int, request: Any, failure: Any) -> None:
    error, message = failure
    kafka = kafka_answers[_line(api_key, version, request, error, message)]
    assert not kafka.startswith("fail"), f"Kafka 4.4 could not answer it: {kafka}"
    ours = error_response(api_key, version, request, error, message)
    if kafka == "none" or ours is None:
        assert kafka == "none" and ours is None, (kafka, ours)
        return
    expected = bytes.fromhex(kafka.removeprefix("ok "))
    if bytes(ours.encode()) != expected:
        pytest.fail(
            f"{error.name} {message!r}:\n kafka:   {_readable(api_key, version, expected)}\n kafkito: {ours}"
        )


def _readable(api_key: int, version: int, body: bytes) -> Any:
    try:
        return RESPONSES[api_key].decode(body, version=version)
    except Exception:  # kafka-python cannot read every body alone (ApiVersions v3+)
        return body.hex()


@pytest.mark.parametrize(("api_key", "version"), _every(True))
def test_a_failed_request_is_answered_as_kafkas_get_error_response(
    kafka_answers: dict[str, str], api_key: int, version: int
) -> None:
    for failure in FAILURES:
        _compare(kafka_answers, api_key, version, _sample(api_key, version), failure)


@pytest.mark.parametrize("markers", MARKERS, ids=range(len(MARKERS)))
def test_write_txn_markers_refusal_answers_each_partition_in_kafkas_order(
    kafka_answers: dict[str, str], markers: list[dict[str, Any]]
) -> None:
    for version in (1, 2):
        request = build_request(27, version, markers=markers)
        _compare(kafka_answers, 27, version, request, (E.CLUSTER_AUTHORIZATION_FAILED, None))


@pytest.mark.parametrize("version", [3, 13])
def test_produce_with_acks_0_gets_no_error_answer_as_in_kafka(
    kafka_answers: dict[str, str], version: int
) -> None:
    _compare(kafka_answers, 0, version, _no_acks(version), (E.CLUSTER_AUTHORIZATION_FAILED, None))
