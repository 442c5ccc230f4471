"""Every API at every version ApiVersions advertises gets a well-formed answer of that version, with
the error its default-valued request deserves, and the connection stays open.

The APIs and versions come from the registry (`broker/handlers/__init__.py`), so a new API is covered
the moment its row is added: if its default request is not answered NONE, add it to EXPECTED.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import pytest

from kafkito.broker.handlers import KAFKA4_MINIMUMS, supported_versions
from kafkito.protocol.codec import RESPONSES, build_request
from kafkito.protocol.error_response import error_response
from kafkito.protocol.errors import ErrorCode
from tests.conftest import make_config
from tests.protocol_versions.requests import default_request, error_codes
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

E = ErrorCode
# The errors a default-valued request is answered with (an empty group id, a null or zero field that
# Kafka refuses); every other API must answer NONE (or nothing).
EXPECTED: dict[int, set[int]] = {
    11: {E.INVALID_GROUP_ID},  # JoinGroup
    12: {E.INVALID_GROUP_ID},  # Heartbeat
    13: {E.INVALID_GROUP_ID},  # LeaveGroup
    14: {E.INVALID_GROUP_ID, E.INCONSISTENT_GROUP_PROTOCOL},  # SyncGroup (v5: null protocol type)
    17: {E.ILLEGAL_SASL_STATE},  # SaslHandshake on a PLAINTEXT listener
    22: {E.INVALID_REQUEST},  # InitProducerId: transaction timeout 0
    25: {E.INVALID_REQUEST},  # AddOffsetsToTxn: no transactional id
    26: {E.INVALID_REQUEST},  # EndTxn: no producer id
    36: {E.ILLEGAL_SASL_STATE},  # SaslAuthenticate on a PLAINTEXT listener
    38: {E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED},  # CreateDelegationToken on a PLAINTEXT listener
    39: {E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED},  # RenewDelegationToken on a PLAINTEXT listener
    40: {E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED},  # ExpireDelegationToken on a PLAINTEXT listener
    41: {E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED},  # DescribeDelegationToken on a PLAINTEXT listener
    47: {E.INVALID_GROUP_ID},  # OffsetDelete
    68: {E.INVALID_REQUEST},  # ConsumerGroupHeartbeat: no group id
    72: {E.INVALID_REQUEST},  # PushTelemetry: no client instance id
    76: {E.INVALID_REQUEST},  # ShareGroupHeartbeat: no group id
    78: {E.INVALID_REQUEST},  # ShareFetch: no member id (checked before the group id, as Kafka 4.4 does)
    79: {E.INVALID_REQUEST},  # ShareAcknowledge: no member id
    88: {E.INVALID_REQUEST},  # StreamsGroupHeartbeat: no member id
    91: {E.INVALID_GROUP_ID},  # AlterShareGroupOffsets
    92: {E.INVALID_GROUP_ID},  # DeleteShareGroupOffsets
    93: {E.UNSUPPORTED_VERSION},  # StreamsGroupTopologyDescriptionUpdate: no topology description plugin
}
# Served but not advertised, as by a Kafka broker without a client telemetry exporter.
UNADVERTISED = {71, 72}  # GetTelemetrySubscriptions, PushTelemetry


def _every(kafka4: bool) -> list[tuple[int, int]]:
    return [(key, v) for key, lo, hi in supported_versions(kafka4) for v in range(lo, hi + 1)]


@pytest.fixture(scope="module")
def brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[bool, ThreadBroker]]:
    started = {
        kafka4: ThreadBroker(
            make_config(
                tmp_path_factory.mktemp(f"versions{int(kafka4)}"),
                group_initial_rebalance_delay_ms=0,
                kafkito_api_versions_kafka4_minimums=str(kafka4).lower(),
            )
        ).start()
        for kafka4 in (False, True)
    }
    yield started
    for b in started.values():
        b.stop()


def _ask(client: WireClient, api_key: int, version: int) -> bytes | None:
    request = default_request(api_key, version)
    client._correlation += 1
    request.with_header(correlation_id=client._correlation, client_id=client.client_id)
    client.send_raw(bytes(request.encode(header=True, framed=True)))
    return client.recv_frame()


@pytest.mark.parametrize(("api_key", "version"), _every(False))
def test_every_advertised_version_is_answered(
    brokers: dict[bool, ThreadBroker], api_key: int, version: int
) -> None:
    with WireClient(brokers[False].bootstrap) as client:
        frame = _ask(client, api_key, version)
        assert frame is not None, "the broker closed the connection"
        response = RESPONSES[api_key].decode(frame, version=version, header=True)
        assert response.header.correlation_id == client._correlation
        assert version == response.API_VERSION
        assert bytes(response.encode(header=True)) == frame, "not exactly a response of this version"
        assert set(error_codes(response)) <= EXPECTED.get(api_key, {E.NONE}) | {E.NONE}
        assert client.request(18, 0).error_code == E.NONE  # the connection is still open


def test_api_versions_advertises_what_is_served(brokers: dict[bool, ThreadBroker]) -> None:
    for kafka4, broker in brokers.items():
        with WireClient(broker.bootstrap) as client:
            response = client.request(18, 3, client_software_name="t", client_software_version="1")
        advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        served = {key: (lo, hi) for key, lo, hi in supported_versions(kafka4) if key not in UNADVERTISED}
        served[0] = (0, served[0][1])  # Produce from v0, as Kafka 4 advertises it (KAFKA-18659)
        assert advertised == served


def test_kafka4_minimums_refuse_the_removed_versions_as_kafka_4_does(
    brokers: dict[bool, ThreadBroker],
) -> None:
    removed = [
        (key, v) for key, low in KAFKA4_MINIMUMS.items() for v in range(low) if (key, v) in _every(False)
    ]
    assert (0, 2) in removed and (1, 3) in removed and (2, 0) in removed
    for key, version in removed:
        with WireClient(brokers[True].bootstrap) as client:
            assert _ask(client, key, version) is None, f"api {key} v{version} was answered"
        with WireClient(brokers[False].bootstrap) as client:
            assert _ask(client, key, version) is not None


@pytest.mark.parametrize(("api_key", "version"), _every(True))
def test_kafka4_broker_answers_every_version_it_serves(
    brokers: dict[bool, ThreadBroker], api_key: int, version: int
) -> None:
    with WireClient(brokers[True].bootstrap) as client:
        frame = _ask(client, api_key, version)
        assert frame is not None
        assert version == RESPONSES[api_key].decode(frame, version=version, header=True).API_VERSION


def test_the_refusal_mirrors_the_entries_of_a_response_without_a_top_level_error() -> None:
    marker = dict(
        producer_id=5,
        producer_epoch=0,
        transaction_result=True,
        coordinator_epoch=0,
        topics=[dict(name="a", partition_indexes=[1])],
    )
    request = build_request(27, 1, markers=[marker])  # WriteTxnMarkers: no top-level error code
    response = error_response(27, 1, request, E.UNSUPPORTED_VERSION, "no")
    assert [(m.producer_id, [t.name for t in m.topics]) for m in response.markers] == [(5, ["a"])]
    creations = [dict(resource_type=2, resource_name="t", resource_pattern_type=3, principal="User:a",
                      host="*", operation=2, permission_type=3)] * 2  # fmt: skip
    acls = error_response(30, 1, build_request(30, 1, creations=creations), E.UNSUPPORTED_VERSION, "no")
    assert [(r.error_code, r.error_message) for r in acls.results] == [(E.UNSUPPORTED_VERSION, "no")] * 2


def test_an_unknown_api_key_or_version_closes_as_kafka_does(brokers: dict[bool, ThreadBroker]) -> None:
    for frame in (
        struct.pack(">ihhih", 10, 999, 0, 1, 0),  # no such API
        struct.pack(">ihhih", 10, 17, 99, 1, 0),  # SaslHandshake v99
        struct.pack(">ihhih", 10, 0, 99, 1, 0),  # Produce v99
    ):
        with WireClient(brokers[False].bootstrap) as client:
            client.send_raw(frame)
            assert client.is_closed_by_peer()
