"""Requests refused as a whole, and malformed ones, for every served API and version (from the registry),
sent by User:ANONYMOUS, which has no ACL, to a broker enforcing them.

A refused request is answered exactly as Kafka's getErrorResponse of its API answers it (the error on
each entry Kafka answers; `tests/protocol/test_error_answers.py` pins those shapes down); a malformed
frame closes its own connection, with the reason logged, while another connection is served.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from kafkito.protocol.codec import RESPONSES
from kafkito.protocol.error_response import error_response
from kafkito.protocol.errors import ErrorCode
from tests.authorization.conftest import AclBroker, acl_broker
from tests.protocol.samples import frame, sample_request
from tests.protocol_versions.test_every_version import _every
from tests.support.wire import WireClient

E = ErrorCode
REFUSALS = (
    E.TOPIC_AUTHORIZATION_FAILED,
    E.GROUP_AUTHORIZATION_FAILED,
    E.CLUSTER_AUTHORIZATION_FAILED,
    E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
)
# APIs whose entries are checked one by one and answered by their handler, or that need no ACL: Kafka
# answers them per entry (or lists only what may be seen), not with getErrorResponse.
NOT_REFUSED_WHOLE = {
    0: "Produce: each partition (the handler answers the others)",
    1: "Fetch: the handler refuses each topic",
    3: "Metadata: each topic",
    10: "FindCoordinator v4+: each key",
    16: "ListGroups: lists the groups the principal may describe",
    17: "SaslHandshake: no ACL",
    18: "ApiVersions: no ACL",
    19: "CreateTopics: each topic",
    21: "DeleteRecords: each topic",
    32: "DescribeConfigs: each resource",
    36: "SaslAuthenticate: no ACL",
    38: "CreateDelegationToken: refused on PLAINTEXT before any ACL (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)",
    39: "RenewDelegationToken: refused on PLAINTEXT before any ACL",
    40: "ExpireDelegationToken: refused on PLAINTEXT before any ACL",
    41: "DescribeDelegationToken: refused on PLAINTEXT before any ACL",
    60: "DescribeCluster: reports the principal's operations",
    66: "ListTransactions: lists the transactional ids the principal may describe",
    71: "GetTelemetrySubscriptions: no ACL",
    72: "PushTelemetry: no ACL",
    90: "DescribeShareGroupOffsets: each group",
}


@pytest.fixture(scope="module")
def enforcing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AclBroker]:
    thread = acl_broker(Path(tmp_path_factory.mktemp("refusals"))).start()
    yield AclBroker(thread)
    thread.stop()


def _expected(api_key: int, version: int, correlation_id: int) -> dict[int, bytes]:
    """What each refusal error would be answered with, framed as the broker frames it."""
    out: dict[int, bytes] = {}
    for error in REFUSALS:
        response = error_response(api_key, version, sample_request(api_key, version), error)
        response.with_header(correlation_id=correlation_id)
        out[error] = bytes(response.encode(header=True))
    return out


def test_alter_user_scram_credentials_refused_answers_each_user(enforcing: AclBroker) -> None:
    salted = {"mechanism": 1, "iterations": 4096, "salt": b"salt", "salted_password": b"pw"}
    with WireClient(enforcing.plaintext) as client:
        response = client.request(
            51,
            0,
            deletions=[{"name": "zoe", "mechanism": 1}],
            upsertions=[{"name": "bob", **salted}, {"name": "zoe", **salted}],
        )
    assert [(r.user, r.error_code, r.error_message) for r in response.results] == [
        ("bob", E.CLUSTER_AUTHORIZATION_FAILED, None),
        ("zoe", E.CLUSTER_AUTHORIZATION_FAILED, None),
    ]


@pytest.mark.parametrize(
    ("api_key", "version"), [(k, v) for k, v in _every(False) if k not in NOT_REFUSED_WHOLE]
)
def test_a_request_refused_as_a_whole_gets_kafkas_error_answer(
    enforcing: AclBroker, api_key: int, version: int
) -> None:
    with WireClient(enforcing.plaintext) as client:
        client.send_raw(frame(sample_request(api_key, version), 41, client.client_id))
        answer = client.recv_frame()
        assert answer is not None, "the broker closed the connection"
        refusals = [e for e, expected in _expected(api_key, version, 41).items() if expected == answer]
        decoded = RESPONSES[api_key].decode(answer, version=version, header=True)
        assert refusals, f"not a getErrorResponse answer: {decoded}"
        assert client.request(18, 0).error_code == E.NONE  # the connection is still served


def _malformed(api_key: int, version: int) -> bytes | None:
    """The sample request's header without its body: its first field cannot be read (None: a version
    whose body is empty, which no cut can make malformed)."""
    request = sample_request(api_key, version)
    whole = frame(request, 42, "malformed")
    body = len(bytes(request.encode()))
    if body == 0:
        return None
    cut = whole[4 : len(whole) - body]
    return len(cut).to_bytes(4, "big") + cut


@pytest.mark.parametrize(("api_key", "version"), _every(False))
def test_a_malformed_request_closes_only_its_connection(
    enforcing: AclBroker, api_key: int, version: int
) -> None:
    malformed = _malformed(api_key, version)
    if malformed is None:
        assert (api_key, version) in {(18, 0), (18, 1), (18, 2), (16, 0), (16, 1), (16, 2), (71, 0)}
        return
    with (
        capture_logs() as logs,
        WireClient(enforcing.plaintext) as other,
        WireClient(enforcing.plaintext) as bad,
    ):
        bad.send_raw(malformed)
        assert bad.recv_frame() is None, "a malformed frame was answered"
        assert other.request(18, 0).error_code == E.NONE
    closed = [e for e in logs if e["event"] == "connection.closed"]
    assert len(closed) == 1 and closed[0]["reason"], logs
