"""A consumer group rebuilt from the real `__consumer_offsets` log equals the one that wrote it:
consumer-protocol, regex, static (left for a while) and classic members, committed offsets, and a
downgrade to a classic group."""

from __future__ import annotations

from pathlib import Path

from kafkito.broker.coordinator import (
    GroupCoordinator,
    JoinGroupRequest,
    OffsetAndMetadata,
    OffsetCommitRequest,
    SyncGroupRequest,
    TopicPartition,
)
from kafkito.broker.coordinator.consumer.requests import ConsumerHeartbeatRequest
from kafkito.broker.coordinator.consumer.results import ConsumerHeartbeatResult
from kafkito.broker.coordinator.consumer.topics import InMemoryTopics
from kafkito.broker.coordinator.results import JoinGroupResult, SyncGroupResult
from kafkito.protocol.errors import ErrorCode
from tests.consumer_groups.harness import heartbeat_request
from tests.consumer_groups.test_state_machine import snapshot
from tests.coordinator.harness import subscription
from tests.offsets.harness import OffsetsHarness


def _started(
    data_dir: Path, topics: InMemoryTopics, previous: OffsetsHarness | None = None
) -> OffsetsHarness:
    oh = previous.restart(load=False) if previous is not None else OffsetsHarness(data_dir, load=False)
    oh.coordinator.topics = topics  # as the broker does: the topics view before the load
    oh.manager.load_now(oh.coordinator)
    return oh


def _beat(coordinator: GroupCoordinator, request: ConsumerHeartbeatRequest) -> ConsumerHeartbeatResult:
    out: list[ConsumerHeartbeatResult] = []
    coordinator.consumer_group_heartbeat(request, out.append)
    assert out and out[0].error is ErrorCode.NONE, out
    return out[0]


def _classic_joins(coordinator: GroupCoordinator) -> str:
    joined: list[JoinGroupResult] = []
    join = JoinGroupRequest(
        "g", "", "classic-1", "c", "/h", 30_000, 10_000, "consumer", (("range", subscription("t")),),
        api_version=5,
    )  # fmt: skip
    coordinator.join_group(join, joined.append)
    assert joined[0].error is ErrorCode.NONE
    synced: list[SyncGroupResult] = []
    sync = SyncGroupRequest("g", joined[0].generation_id, joined[0].member_id, "classic-1", None, None, {})
    coordinator.sync_group(sync, synced.append)
    assert synced[0].error is ErrorCode.NONE
    return joined[0].member_id


def test_a_mixed_consumer_group_restarts_as_it_was(tmp_path: Path) -> None:
    topics = InMemoryTopics()
    topics.create("t", 4)
    topics.create("orders-eu", 2)
    oh = _started(tmp_path, topics)
    c = oh.coordinator
    a = _beat(c, heartbeat_request("g", "a", 0, topics=("t",), owned=()))
    _beat(c, heartbeat_request("g", "r", 0, topics=(), regex="orders-.*", owned=()))
    _beat(c, heartbeat_request("g", "s", 0, topics=("t",), owned=(), instance_id="static-s"))
    classic = _classic_joins(c)
    _beat(c, heartbeat_request("g", "a", a.member_epoch, owned=a.assignment))
    _beat(c, heartbeat_request("g", "s", -2, instance_id="static-s"))
    tp = TopicPartition("t", 0)
    committed: list[dict[TopicPartition, ErrorCode]] = []
    member = c.get_consumer_group("g")
    assert member is not None
    epoch = member.members["a"].member_epoch
    c.commit_offsets(
        OffsetCommitRequest("g", "a", None, epoch, {tp: OffsetAndMetadata(42)}), committed.append
    )
    assert committed == [{tp: ErrorCode.NONE}]
    live = c.get_consumer_group("g")
    assert live is not None and classic in live.members and live.members["s"].member_epoch == -2

    oh = _started(tmp_path, topics, previous=oh)
    rebuilt = oh.coordinator.get_consumer_group("g")
    assert rebuilt is not None
    assert snapshot(rebuilt) == snapshot(live)
    assert rebuilt.offsets[tp].offset == 42

    # Every consumer-protocol member leaves: the group is classic again, across a restart too.
    for member_id in ("a", "r"):
        _beat(oh.coordinator, heartbeat_request("g", member_id, -1))
    _beat(oh.coordinator, heartbeat_request("g", "s", -1, instance_id="static-s"))
    assert oh.coordinator.get_consumer_group("g") is None
    assert oh.coordinator.get_group("g") is not None
    oh = _started(tmp_path, topics, previous=oh)
    assert oh.coordinator.get_consumer_group("g") is None
    back = oh.coordinator.get_group("g")
    assert back is not None and back.offsets[tp].offset == 42
    assert [m.member_id for m in back.members()] == [classic]
    oh.close()
