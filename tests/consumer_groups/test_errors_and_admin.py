"""Consumer group heartbeat errors as Kafka returns them, offsets by member epoch, and the admin calls."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kafkito.broker.coordinator import CoordinatorConfig, JoinGroupRequest, OffsetAndMetadata, TopicPartition
from kafkito.broker.coordinator.consumer.records import ConsumerGroupMetadataTombstone
from kafkito.broker.coordinator.consumer.requests import ConsumerHeartbeatRequest
from kafkito.broker.coordinator.offset_expiry import expired_offsets
from kafkito.broker.coordinator.requests import OffsetCommitRequest
from kafkito.broker.coordinator.results import JoinGroupResult
from kafkito.protocol.errors import ErrorCode
from tests.consumer_groups.harness import Harness, Member, converge, heartbeat_request, was_written


def _joined() -> tuple[Harness, Member]:
    h = Harness()
    h.topics.create("t", 3)
    a = Member("a", ("t",))
    h.join("g", a)
    return h, a


def _join_request(**changes: Any) -> ConsumerHeartbeatRequest:
    return heartbeat_request("g", "m", 0, topics=("t",), owned=())._replace(**changes)


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"group_id": ""}, ErrorCode.INVALID_REQUEST),
        ({"member_id": ""}, ErrorCode.INVALID_REQUEST),
        ({"rebalance_timeout_ms": -1}, ErrorCode.INVALID_REQUEST),
        ({"owned_partitions": None}, ErrorCode.INVALID_REQUEST),
        ({"subscribed_topic_names": None}, ErrorCode.INVALID_REQUEST),
        ({"instance_id": ""}, ErrorCode.INVALID_REQUEST),
        ({"rack_id": ""}, ErrorCode.INVALID_REQUEST),
        ({"member_epoch": -3}, ErrorCode.INVALID_REQUEST),
        ({"server_assignor": "sticky"}, ErrorCode.UNSUPPORTED_ASSIGNOR),
        ({"subscribed_topic_regex": "(unclosed"}, ErrorCode.INVALID_REGULAR_EXPRESSION),
        ({"subscribed_topic_regex": "(?=lookahead)"}, ErrorCode.INVALID_REGULAR_EXPRESSION),
    ],
)
def test_bad_heartbeats_are_refused_with_kafkas_error(changes: dict[str, object], error: ErrorCode) -> None:
    h = Harness()
    result = h.heartbeat(_join_request(**changes))
    assert result.error is error
    assert result.error_message
    assert h.coordinator.get_consumer_group("g") is None


def test_v0_join_without_member_id_gets_one() -> None:
    h = Harness()
    result = h.heartbeat(_join_request(member_id="", api_version=0))
    assert result.error is ErrorCode.NONE
    assert result.member_id


def test_unknown_member_and_fenced_epochs() -> None:
    h, a = _joined()
    assert h.heartbeat(heartbeat_request("g", "ghost", 1, owned=())).error is ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat(heartbeat_request("nope", "a", 1, owned=())).error is ErrorCode.UNKNOWN_MEMBER_ID
    ahead = h.heartbeat(heartbeat_request("g", "a", a.epoch + 5, owned=a.owned_wire()))
    assert ahead.error is ErrorCode.FENCED_MEMBER_EPOCH
    b, c = Member("b", ("t",)), Member("c", ("t",))
    h.join("g", b)
    converge(h, "g", [a, b])
    h.join("g", c)
    converge(h, "g", [a, b, c])
    member = h.group("g").members["a"]
    assert (member.member_epoch, member.previous_member_epoch) == (4, 3)
    # An older epoch that is not the previous one is fenced...
    behind = h.heartbeat(heartbeat_request("g", "a", 1, owned=a.owned_wire()))
    assert behind.error is ErrorCode.FENCED_MEMBER_EPOCH
    # ...and so is the previous one while owning more than assigned...
    everything = ((next(iter(a.owned)), (0, 1, 2)),)
    greedy = h.heartbeat(heartbeat_request("g", "a", 3, owned=everything))
    assert greedy.error is ErrorCode.FENCED_MEMBER_EPOCH
    # ...but the previous epoch owning a subset is fine: the member missed an answer.
    stale = h.heartbeat(heartbeat_request("g", "a", 3, owned=a.owned_wire()))
    assert stale.error is ErrorCode.NONE and stale.member_epoch == 4


def test_a_fenced_member_rejoins_under_its_id_with_epoch_zero() -> None:
    h, a = _joined()
    b = Member("b", ("t",))
    h.join("g", b)
    converge(h, "g", [a, b])
    kept = dict(a.owned)
    assert h.heartbeat(heartbeat_request("g", "a", a.epoch + 3, owned=a.owned_wire())).error is (
        ErrorCode.FENCED_MEMBER_EPOCH
    )
    rejoined = h.heartbeat(heartbeat_request("g", "a", 0, topics=("t",), owned=()))
    assert rejoined.error is ErrorCode.NONE
    assert rejoined.member_epoch == h.group("g").members["a"].member_epoch
    assert rejoined.assignment is not None and {t: frozenset(p) for t, p in rejoined.assignment} == kept


def test_group_max_size_reached() -> None:
    h = Harness(config=dataclasses.replace(CoordinatorConfig(), group_consumer_max_size=1))
    h.topics.create("t", 1)
    h.join("g", Member("a", ("t",)))
    assert h.join("g", Member("b", ("t",))).error is ErrorCode.GROUP_MAX_SIZE_REACHED


def test_a_classic_group_of_another_protocol_type_is_not_taken_over() -> None:
    h = Harness()
    replies: list[JoinGroupResult] = []
    h.coordinator.join_group(
        JoinGroupRequest("g", "", None, "c", "h", 30000, 10000, "connect", (("v1", b""),), api_version=3),
        replies.append,
    )
    classic = h.coordinator.get_group("g")
    assert classic is not None and classic.size == 1  # joining (parked for the initial delay)
    result = h.heartbeat(_join_request())
    assert result.error is ErrorCode.GROUP_ID_NOT_FOUND
    assert result.error_message is not None and "'connect'" in result.error_message
    assert h.coordinator.get_consumer_group("g") is None


def test_offset_commit_checks_the_member_epoch() -> None:
    h, a = _joined()
    tp = TopicPartition("t", 0)

    def commit(member_id: str, epoch: int) -> ErrorCode:
        out: list[dict[TopicPartition, ErrorCode]] = []
        request = OffsetCommitRequest("g", member_id, None, epoch, {tp: OffsetAndMetadata(5)})
        h.coordinator.commit_offsets(request, out.append)
        return out[0][tp]

    assert commit("a", a.epoch + 1) is ErrorCode.STALE_MEMBER_EPOCH
    assert commit("ghost", a.epoch) is ErrorCode.UNKNOWN_MEMBER_ID
    assert commit("", -1) is ErrorCode.UNKNOWN_MEMBER_ID  # the group has members
    assert commit("a", a.epoch) is ErrorCode.NONE
    error, offsets = h.coordinator.fetch_offsets("g", [tp])
    assert error is ErrorCode.NONE and offsets[tp].offset == 5
    # OffsetFetch v9 names the member: it must be known and at its epoch (-1: an admin client).
    assert h.coordinator.fetch_offsets("g", [tp], False, "a", a.epoch + 1)[0] is ErrorCode.STALE_MEMBER_EPOCH
    assert h.coordinator.fetch_offsets("g", [tp], False, "ghost", 1)[0] is ErrorCode.UNKNOWN_MEMBER_ID
    assert h.coordinator.fetch_offsets("g", [tp], False, "a", a.epoch)[1][tp].offset == 5
    assert h.coordinator.fetch_offsets("g", [tp], False, None, -1)[1][tp].offset == 5
    # A member id named, even empty, is checked (Kafka lets only a null one through unchecked).
    assert h.coordinator.fetch_offsets("g", [tp], False, "", -1)[0] is ErrorCode.UNKNOWN_MEMBER_ID
    # The committed offset survives a restart, on the consumer group.
    fresh = h.restart()
    group = fresh.get_consumer_group("g")
    assert group is not None and group.offsets[tp].offset == 5


def test_list_describe_and_delete() -> None:
    h, a = _joined()
    _error, overviews = h.coordinator.list_groups(types=["consumer"])
    assert [(o.group_id, o.group_type, o.state) for o in overviews] == [("g", "consumer", "Stable")]
    assert h.coordinator.list_groups(types=["classic"])[1] == []
    described = h.coordinator.describe_consumer_groups(["g", "missing"])
    assert described[0].error is ErrorCode.NONE and described[0].members[0].member_id == "a"
    assert described[1].error is ErrorCode.GROUP_ID_NOT_FOUND
    assert described[0].assignor_name == "uniform"
    h.join("g", Member("r", ("t",)))
    h.heartbeat(heartbeat_request("g", "r", 0, topics=("t",), owned=(), assignor="range"))
    h.heartbeat(heartbeat_request("g", "a", a.epoch, owned=a.owned_wire(), assignor="range"))
    assert h.coordinator.describe_consumer_groups(["g"])[0].assignor_name == "range"
    h.heartbeat(heartbeat_request("g", "r", -1))
    assert h.coordinator.delete_groups(["g"]) == {"g": ErrorCode.NON_EMPTY_GROUP}
    h.heartbeat(heartbeat_request("g", "a", -1))
    assert h.group("g").state.value == "Empty"
    assert h.coordinator.delete_groups(["g"]) == {"g": ErrorCode.NONE}
    assert h.coordinator.get_consumer_group("g") is None
    assert was_written(h, ConsumerGroupMetadataTombstone("g"))
    assert h.restart().get_consumer_group("g") is None


def test_offsets_of_an_empty_consumer_group_expire_and_the_group_goes() -> None:
    h, a = _joined()
    tp, other = TopicPartition("t", 0), TopicPartition("gone", 0)
    out: list[dict[TopicPartition, ErrorCode]] = []
    offsets = {tp: OffsetAndMetadata(1), other: OffsetAndMetadata(2)}
    h.coordinator.commit_offsets(OffsetCommitRequest("g", "a", None, a.epoch, offsets), out.append)
    assert set(out[0].values()) == {ErrorCode.NONE}
    retention = 1000
    h.clock.advance(retention)
    group = h.group("g")
    # While `a` subscribes to t, only the unsubscribed topic's offset expires.
    assert expired_offsets(group, h.clock.now_ms(), retention) == [other]
    assert h.coordinator.expire_offsets("g", [other]) is False
    h.heartbeat(heartbeat_request("g", "a", -1))
    assert expired_offsets(group, h.clock.now_ms(), retention) == [tp]
    assert h.coordinator.expire_offsets("g", [tp]) is True
    assert h.coordinator.get_consumer_group("g") is None
    assert h.coordinator.get_group("g") is None
    assert h.restart().get_consumer_group("g") is None


def test_offset_delete_on_a_consumer_group_spares_subscribed_topics() -> None:
    h, a = _joined()
    tp, other = TopicPartition("t", 0), TopicPartition("other", 0)
    out: list[dict[TopicPartition, ErrorCode]] = []
    offsets = {tp: OffsetAndMetadata(1), other: OffsetAndMetadata(2)}
    h.coordinator.commit_offsets(OffsetCommitRequest("g", "a", None, a.epoch, offsets), out.append)
    error, results = h.coordinator.delete_offsets("g", [tp, other])
    assert error is ErrorCode.NONE
    assert results == {tp: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, other: ErrorCode.NONE}
    assert set(h.group("g").offsets) == {tp}
    assert h.coordinator.delete_offsets("missing", [tp])[0] is ErrorCode.GROUP_ID_NOT_FOUND
