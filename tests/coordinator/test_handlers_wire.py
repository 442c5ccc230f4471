"""The group APIs over TCP with exact requests, across every version the handlers advertise."""

from __future__ import annotations

from typing import Any

import pytest

from kafkito.protocol.errors import ErrorCode
from tests.coordinator.harness import subscription
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

FIND_COORDINATOR, JOIN, HEARTBEAT, LEAVE, SYNC, DESCRIBE, LIST, DELETE = 10, 11, 12, 13, 14, 15, 16, 42
PROTOCOLS = [dict(name="range", metadata=subscription("t"))]


def join(
    client: WireClient, version: int, group: str, member_id: str = "", instance: str | None = None
) -> Any:
    return client.request(
        JOIN,
        version,
        group_id=group,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        member_id=member_id,
        group_instance_id=instance,
        protocol_type="consumer",
        protocols=PROTOCOLS,
        reason="test",
    )


def join_until_member(client: WireClient, version: int, group: str, instance: str | None = None) -> Any:
    response = join(client, version, group, instance=instance)
    if response.error_code == ErrorCode.MEMBER_ID_REQUIRED:
        response = join(client, version, group, response.member_id, instance)
    assert response.error_code == ErrorCode.NONE, response
    return response


@pytest.mark.parametrize("version", range(0, 7))
def test_find_coordinator_names_this_broker(broker: ThreadBroker, version: int) -> None:
    with WireClient(broker.bootstrap) as client:
        if version >= 4:
            response = client.request(FIND_COORDINATOR, version, key_type=0, coordinator_keys=["a", "b"])
            assert [(c.key, c.error_code, c.port) for c in response.coordinators] == [
                ("a", 0, broker.port),
                ("b", 0, broker.port),
            ]
        else:
            response = client.request(FIND_COORDINATOR, version, key="a", key_type=0)
            assert (response.error_code, response.host, response.port) == (0, "127.0.0.1", broker.port)


def test_find_coordinator_for_transactions_and_unknown_key_types(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        txn = client.request(FIND_COORDINATOR, 3, key="txn-1", key_type=1)
        assert (txn.error_code, txn.port) == (ErrorCode.NONE, broker.port)
        bad = client.request(FIND_COORDINATOR, 4, key_type=7, coordinator_keys=["x"])
        assert bad.coordinators[0].error_code == ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize("version", range(0, 10))
def test_join_sync_heartbeat_leave_of_a_single_member_at_every_join_version(
    broker: ThreadBroker, version: int
) -> None:
    group = f"wire-{version}"
    sync_version = min(version, 5)
    heartbeat_version = min(version, 4)
    leave_version = min(version, 5)
    with WireClient(broker.bootstrap, client_id="wire") as client:
        first = join(client, version, group)
        if version >= 4:
            assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
            assert first.member_id.startswith("wire-")
            joined = join(client, version, group, first.member_id)
        else:
            joined = first
        assert joined.error_code == ErrorCode.NONE
        member = joined.member_id
        assert (joined.leader, joined.generation_id, joined.protocol_name) == (member, 1, "range")
        assert [m.member_id for m in joined.members] == [member]
        if version >= 7:
            assert joined.protocol_type == "consumer"
        synced = client.request(
            SYNC,
            sync_version,
            group_id=group,
            generation_id=1,
            member_id=member,
            group_instance_id=None,
            protocol_type="consumer",
            protocol_name="range",
            assignments=[dict(member_id=member, assignment=b"\x00\x01")],
        )
        assert (synced.error_code, bytes(synced.assignment)) == (ErrorCode.NONE, b"\x00\x01")
        beat = client.request(
            HEARTBEAT,
            heartbeat_version,
            group_id=group,
            generation_id=1,
            member_id=member,
            group_instance_id=None,
        )
        assert beat.error_code == ErrorCode.NONE
        if leave_version >= 3:
            left = client.request(
                LEAVE, leave_version, group_id=group, members=[dict(member_id=member, reason="bye")]
            )
            assert (left.error_code, [m.error_code for m in left.members]) == (0, [0])
        else:
            left = client.request(LEAVE, leave_version, group_id=group, member_id=member)
            assert left.error_code == ErrorCode.NONE
        gone = client.request(LEAVE, min(leave_version, 2), group_id=group, member_id=member)
        assert gone.error_code == ErrorCode.UNKNOWN_MEMBER_ID  # v0-2: the member's error at top level


def test_sync_v5_without_protocol_type_is_inconsistent_group_protocol(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as client:
        member = join_until_member(client, 9, "v5-sync").member_id
        synced = client.request(
            SYNC, 5, group_id="v5-sync", generation_id=1, member_id=member, group_instance_id=None,
            protocol_type=None, protocol_name="range", assignments=[],
        )  # fmt: skip
        assert synced.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_leader_join_is_parked_until_the_follower_joins(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as a, WireClient(broker.bootstrap) as b:
        leader = join_until_member(a, 9, "pair").member_id
        follower = join(b, 9, "pair")
        corr = b.send(
            JOIN, 9, group_id="pair", session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
            member_id=follower.member_id, group_instance_id=None, protocol_type="consumer",
            protocols=PROTOCOLS, reason=None,
        )  # fmt: skip
        rejoin = join(a, 9, "pair", leader)  # completes the phase: both are answered
        follower_joined = b.recv(JOIN, 9)
        assert follower_joined.header.correlation_id == corr
        assert rejoin.generation_id == follower_joined.generation_id == 2
        assert len(rejoin.members) == 2 and follower_joined.members == []


@pytest.mark.parametrize("version", range(0, 6))
def test_describe_groups_at_every_version(broker: ThreadBroker, version: int) -> None:
    with WireClient(broker.bootstrap, client_id="desc") as client:
        member = join_until_member(client, 5, "described", instance="inst").member_id
        client.request(
            SYNC, 3, group_id="described", generation_id=1, member_id=member, group_instance_id="inst",
            assignments=[dict(member_id=member, assignment=b"A")],
        )  # fmt: skip
        response = client.request(
            DESCRIBE, version, groups=["described", "unknown"], include_authorized_operations=True
        )
        known, unknown = response.groups
        assert (known.error_code, known.group_state, known.protocol_type, known.protocol_data) == (
            0, "Stable", "consumer", "range",
        )  # fmt: skip
        (m,) = known.members
        assert (m.member_id, m.client_id, m.client_host) == (member, "desc", "/127.0.0.1")
        assert (bytes(m.member_metadata), bytes(m.member_assignment)) == (subscription("t"), b"A")
        if version >= 4:
            assert m.group_instance_id == "inst"
        if version >= 3:
            # READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS (Kafka 4), the Dead group's too.
            assert known.authorized_operations == unknown.authorized_operations == {3, 6, 8, 10, 11}
        assert (unknown.error_code, unknown.group_state, unknown.members) == (0, "Dead", [])


@pytest.mark.parametrize("version", range(0, 6))
def test_list_groups_at_every_version(broker: ThreadBroker, version: int) -> None:
    with WireClient(broker.bootstrap) as client:
        join_until_member(client, 9, "listed")
        fields: dict[str, Any] = {}
        if version >= 4:
            fields["states_filter"] = ["completingrebalance"]
        if version >= 5:
            fields["types_filter"] = ["Classic"]
        response = client.request(LIST, version, **fields)
        assert response.error_code == ErrorCode.NONE
        (listed,) = [g for g in response.groups if g.group_id == "listed"]
        assert listed.protocol_type == "consumer"
        if version >= 4:
            assert listed.group_state == "CompletingRebalance"
        if version >= 5:
            assert listed.group_type == "classic"


@pytest.mark.parametrize("version", range(0, 3))
def test_delete_groups_at_every_version(broker: ThreadBroker, version: int) -> None:
    with WireClient(broker.bootstrap) as client:
        member = join_until_member(client, 9, "busy").member_id
        join_until_member(client, 9, "idle")
        idle_member = client.request(DESCRIBE, 0, groups=["idle"]).groups[0].members[0].member_id
        client.request(LEAVE, 3, group_id="idle", members=[dict(member_id=idle_member)])
        response = client.request(DELETE, version, groups_names=["busy", "idle", "never"])
        assert {r.group_id: r.error_code for r in response.results} == {
            "busy": ErrorCode.NON_EMPTY_GROUP,
            "idle": ErrorCode.NONE,
            "never": ErrorCode.GROUP_ID_NOT_FOUND,
        }
        assert member
