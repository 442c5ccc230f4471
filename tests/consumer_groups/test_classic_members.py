"""Classic members (JoinGroup/SyncGroup/Heartbeat/LeaveGroup) inside a KIP-848 consumer group."""

from __future__ import annotations

import struct

from kafkito.broker.coordinator import (
    JoinGroupRequest,
    LeavingMember,
    OffsetAndMetadata,
    OffsetCommitRequest,
    SyncGroupRequest,
    TopicPartition,
)
from kafkito.broker.coordinator.consumer.classic_protocol import decode_subscription, encode_assignment
from kafkito.broker.coordinator.results import JoinGroupResult, SyncGroupResult
from kafkito.protocol.errors import ErrorCode
from tests.consumer_groups.harness import Harness, Member, converge
from tests.coordinator.harness import subscription

SESSION = 10_000


def decode_assignment(raw: bytes) -> dict[str, set[int]]:
    pos = 2
    (count,) = struct.unpack_from(">i", raw, pos)
    pos += 4
    out: dict[str, set[int]] = {}
    for _ in range(count):
        (length,) = struct.unpack_from(">h", raw, pos)
        topic = raw[pos + 2 : pos + 2 + length].decode()
        pos += 2 + length
        (n,) = struct.unpack_from(">i", raw, pos)
        pos += 4
        out[topic] = set(struct.unpack_from(f">{n}i", raw, pos))
        pos += 4 * n
    return out


class Classic:
    """A classic `consumer`-protocol client (eager: it gives up everything before rejoining)."""

    def __init__(self, h: Harness, client_id: str = "classic") -> None:
        self.h = h
        self.client_id = client_id
        self.member_id = ""
        self.generation = -1
        self.owned: dict[str, set[int]] = {}

    def join(self) -> JoinGroupResult:
        replies: list[JoinGroupResult] = []
        request = JoinGroupRequest(
            "g", self.member_id, None, self.client_id, "/h", 30_000, SESSION, "consumer",
            (("range", subscription("t")),), api_version=5,
        )  # fmt: skip
        self.h.coordinator.join_group(request, replies.append)
        result = replies[0]
        if result.error is ErrorCode.MEMBER_ID_REQUIRED:
            self.member_id = result.member_id
            return self.join()
        self.owned = {}
        self.generation = result.generation_id
        return result

    def sync(self) -> SyncGroupResult:
        replies: list[SyncGroupResult] = []
        request = SyncGroupRequest("g", self.generation, self.member_id, None, "consumer", "range", {})
        self.h.coordinator.sync_group(request, replies.append)
        if replies[0].error is ErrorCode.NONE:
            self.owned = decode_assignment(replies[0].assignment)
        return replies[0]

    def heartbeat(self) -> ErrorCode:
        return self.h.coordinator.heartbeat("g", self.member_id, None, self.generation)

    def rebalance_until_stable(self, others: list[Member], rounds: int = 8) -> None:
        for _ in range(rounds):
            for other in others:
                self.h.beat("g", other)
            error = self.heartbeat()
            if error is ErrorCode.REBALANCE_IN_PROGRESS or error is ErrorCode.ILLEGAL_GENERATION:
                assert self.join().error is ErrorCode.NONE
                assert self.sync().error is ErrorCode.NONE
            elif error is ErrorCode.NONE and self.h.group("g").state.value == "Stable":
                return
        raise AssertionError(f"no convergence: {self.h.group('g')}")


def _names(h: Harness, member: Member) -> dict[str, set[int]]:
    out = {}
    for topic_id, parts in member.owned.items():
        info = h.topics.by_id(topic_id)
        assert info is not None
        out[info.name] = set(parts)
    return out


def test_a_classic_member_joins_a_consumer_group_and_shares_its_partitions() -> None:
    h = Harness()
    h.topics.create("t", 6)
    a = Member("a", ("t",))
    h.join("g", a)
    classic = Classic(h)
    joined = classic.join()
    assert joined.error is ErrorCode.NONE
    assert joined.member_id == classic.member_id and joined.leader_id == ""  # a follower: no client assignor
    assert (joined.protocol_type, joined.protocol_name) == ("consumer", "range")
    assert classic.sync().error is ErrorCode.NONE
    classic.rebalance_until_stable([a])
    mine, theirs = classic.owned.get("t", set()), _names(h, a).get("t", set())
    assert len(mine) == 3 and len(theirs) == 3 and not (mine & theirs)
    member = h.group("g").members[classic.member_id]
    assert member.classic_member is not None and member.classic_member.session_timeout_ms == SESSION
    # Described as a classic member (member_type 0).
    described = h.coordinator.describe_consumer_groups(["g"])[0]
    assert {m.member_id: m.member_type for m in described.members} == {"a": 1, classic.member_id: 0}


def test_a_classic_member_leaving_and_timing_out() -> None:
    h = Harness()
    h.topics.create("t", 4)
    a = Member("a", ("t",))
    h.join("g", a)
    classic = Classic(h)
    classic.join()
    classic.sync()
    classic.rebalance_until_stable([a])
    result = h.coordinator.leave_group("g", [LeavingMember(classic.member_id)])
    assert [m.error for m in result.members] == [ErrorCode.NONE]
    assert classic.member_id not in h.group("g").members
    converge(h, "g", [a])
    assert _names(h, a) == {"t": {0, 1, 2, 3}}
    # A second classic member that stops heartbeating is fenced after its own session timeout.
    late = Classic(h, "late")
    late.join()
    h.clock.advance(SESSION + 1)
    assert late.member_id not in h.group("g").members
    assert late.heartbeat() is ErrorCode.UNKNOWN_MEMBER_ID


def test_classic_member_errors() -> None:
    h = Harness()
    h.topics.create("t", 2)
    h.join("g", Member("a", ("t",)))
    classic = Classic(h)
    classic.join()
    wrong_generation = SyncGroupRequest("g", classic.generation + 7, classic.member_id, None, None, None, {})
    replies: list[SyncGroupResult] = []
    h.coordinator.sync_group(wrong_generation, replies.append)
    assert replies[0].error is ErrorCode.ILLEGAL_GENERATION
    assert h.coordinator.heartbeat("g", "nobody", None, 1) is ErrorCode.UNKNOWN_MEMBER_ID
    assert h.coordinator.heartbeat("g", classic.member_id, None, 99) is ErrorCode.ILLEGAL_GENERATION
    # Its commits are checked by generation (its member epoch): ILLEGAL_GENERATION, as classic clients expect.
    tp = TopicPartition("t", 0)
    for generation, error in (
        (classic.generation + 1, ErrorCode.ILLEGAL_GENERATION),
        (classic.generation, ErrorCode.NONE),
    ):
        out: list[dict[TopicPartition, ErrorCode]] = []
        commit = OffsetCommitRequest("g", classic.member_id, None, generation, {tp: OffsetAndMetadata(1)})
        h.coordinator.commit_offsets(commit, out.append)
        assert out[0][tp] is error
    # A consumer-protocol member cannot heartbeat as a classic one.
    assert h.coordinator.heartbeat("g", "a", None, 1) is ErrorCode.UNKNOWN_MEMBER_ID
    bad_protocol: list[JoinGroupResult] = []
    h.coordinator.join_group(
        JoinGroupRequest("g", "", None, "c", "/h", 30_000, SESSION, "connect", (("x", b""),), api_version=5),
        bad_protocol.append,
    )
    assert bad_protocol[0].error is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_the_embedded_protocol_codec() -> None:
    sub = decode_subscription(subscription("a", "b"))
    assert sub is not None and sub.topics == ("a", "b") and sub.owned == ()
    assert decode_subscription(b"\x00") is None
    assert decode_assignment(encode_assignment({"t": (2, 0)})) == {"t": {0, 2}}
