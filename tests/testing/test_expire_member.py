"""`KafkitoHandle.expire_member(group, member)`: the broker clock moves past the member's session timeout
(its JoinGroup's, or a consumer group's group.consumer.session.timeout.ms) and the coordinator removes
it; a member still there afterwards fails the call with its session timeout and what was waited for."""

from __future__ import annotations

from typing import Any

import pytest

from kafkito.protocol.errors import ErrorCode
from kafkito.testing import KafkitoHandle
from tests.support.wire import WireClient

JOIN_GROUP, SYNC_GROUP, CONSUMER_GROUP_HEARTBEAT = 11, 14, 68
SESSION_MS = 12_000
PROTOCOL = dict(name="range", metadata=b"\x00\x01\x00\x00\x00\x01\x00\x04jobs\x00\x00\x00\x00")


def _join(client: WireClient, group: str, member_id: str = "") -> Any:
    return client.request(JOIN_GROUP, 5, group_id=group, session_timeout_ms=SESSION_MS,
                          rebalance_timeout_ms=60_000, member_id=member_id, group_instance_id=None,
                          protocol_type="consumer", protocols=[PROTOCOL])  # fmt: skip


def _member_id(client: WireClient, group: str) -> str:
    required = _join(client, group)
    assert required.error_code == ErrorCode.MEMBER_ID_REQUIRED
    return str(required.member_id)


def _stable_member(client: WireClient, group: str) -> str:
    """A classic member that joined and synced, and then never heartbeats."""
    member_id = _member_id(client, group)
    joined = _join(client, group, member_id)
    assert joined.error_code == ErrorCode.NONE
    synced = client.request(SYNC_GROUP, 3, group_id=group, generation_id=joined.generation_id,
                            member_id=member_id, group_instance_id=None,
                            assignments=[dict(member_id=member_id, assignment=b"")])  # fmt: skip
    assert synced.error_code == ErrorCode.NONE
    return member_id


def test_a_classic_member_is_expired_past_its_session_timeout(kafkito: KafkitoHandle) -> None:
    with WireClient(kafkito.bootstrap_servers) as client:
        member_id = _stable_member(client, "workers")
        kafkito.wait_for_group("workers", members=1)
        before = kafkito.now_ms()
        group = kafkito.expire_member("workers", member_id)
    assert group["state"] == "Empty" and group["members"] == []
    assert kafkito.now_ms() - before > SESSION_MS
    evicted = [e for e in kafkito.group_timeline("workers") if e["event"] == "member_evicted"]
    assert [e["member"] for e in evicted] == [member_id]


def test_a_consumer_group_member_is_expired_past_the_groups_session_timeout(kafkito: KafkitoHandle) -> None:
    kafkito.create_topic("jobs")
    with WireClient(kafkito.bootstrap_servers) as client:
        joined = client.request(CONSUMER_GROUP_HEARTBEAT, 0, group_id="readers", member_id="", member_epoch=0,
                                instance_id=None, rack_id=None, rebalance_timeout_ms=60_000,
                                subscribed_topic_names=["jobs"], server_assignor=None,
                                topic_partitions=[])  # fmt: skip
        assert joined.error_code == ErrorCode.NONE
        before = kafkito.now_ms()
        group = kafkito.expire_member("readers", joined.member_id)
    assert group["members"] == []
    assert kafkito.now_ms() - before > 45_000  # group.consumer.session.timeout.ms


def test_a_member_kept_alive_by_a_rebalance_fails_with_its_session_timeout(kafkito: KafkitoHandle) -> None:
    with WireClient(kafkito.bootstrap_servers) as first, WireClient(kafkito.bootstrap_servers) as second:
        _stable_member(first, "workers")
        member_id = _member_id(second, "workers")
        # Parked: the rebalance waits for the first member to join again.
        second.send(JOIN_GROUP, 5, group_id="workers", session_timeout_ms=SESSION_MS,
                    rebalance_timeout_ms=60_000, member_id=member_id, group_instance_id=None,
                    protocol_type="consumer", protocols=[PROTOCOL])  # fmt: skip
        kafkito.wait_for_group("workers", state="PreparingRebalance")
        with pytest.raises(TimeoutError) as raised:
            kafkito.expire_member("workers", member_id, timeout=0.5)
    message = str(raised.value)
    assert message.startswith(
        f"member {member_id!r} of group 'workers' is still in the group: its session timeout is "
        f"{SESSION_MS} ms (session.timeout.ms of its JoinGroup), the broker clock was advanced "
        f"{SESSION_MS + 1} ms, past it, and the test waited 0.5 s for the member to be removed"
    ), message


def test_a_member_that_is_not_there_is_a_value_error(kafkito: KafkitoHandle) -> None:
    with WireClient(kafkito.bootstrap_servers) as client:
        member_id = _stable_member(client, "workers")
        with pytest.raises(
            ValueError, match=rf"'nobody' is not a member of group 'workers' \(members: '{member_id}'\)"
        ):
            kafkito.expire_member("workers", "nobody")
    with pytest.raises(ValueError, match="there is no group 'nowhere'"):
        kafkito.expire_member("nowhere", "nobody")
