"""A KIP-848 consumer group written through the real `__consumer_offsets` log sink is rebuilt equal by
a broker restarted on the same data directory (the loader replaying into a fresh coordinator), and
its members carry on from where they were, mid-reconciliation included."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkito.broker.coordinator import CoordinatorConfig, GroupCoordinator
from kafkito.broker.coordinator.consumer.group import ConsumerGroup
from kafkito.broker.coordinator.consumer.topics import InMemoryTopics
from kafkito.broker.log import cleaner
from kafkito.broker.log.manager import LogManager
from kafkito.broker.offsets import OFFSETS_TOPIC, OffsetsConfig, OffsetsManager
from kafkito.protocol.errors import ErrorCode
from tests.consumer_groups.harness import Harness, Member, converge, heartbeat_request, owned_by_two

WALL_EPOCH = 1_700_000_000_000
GROUP = "cg"


class Broker:
    """The consumer-group half of a broker on a data directory: the coordinator (the consumer
    groups harness, on its own ManualClock that starts at `wall_start`, epoch milliseconds as a
    broker's) writing through a real OffsetsManager, loaded from the directory before serving."""

    def __init__(
        self, data_dir: Path, topics: InMemoryTopics, wall_start: int, log_props: dict[str, Any]
    ) -> None:
        self.data_dir = data_dir
        self.log_props = log_props
        self.h = Harness(
            CoordinatorConfig(group_consumer_assignment_interval_ms=0), topics, start_ms=wall_start
        )
        self.logs = LogManager(data_dir, dict(log_props), time_ms=self.wall)
        self.manager = OffsetsManager(self.logs, OffsetsConfig(num_partitions=3), self.h.clock)
        self.h.sink = self.manager.sink  # type: ignore[assignment]
        self.h.coordinator = GroupCoordinator(
            self.h.config, self.h.clock, self.h.timer, self.manager.sink, topics=topics
        )
        self.manager.load_now(self.h.coordinator)

    def wall(self) -> int:
        return self.h.clock.now_ms()

    def restart(self, gap_ms: int = 5_000) -> Broker:
        self.logs.close()
        return Broker(self.data_dir, self.h.topics, self.wall() + gap_ms, self.log_props)

    @property
    def group(self) -> ConsumerGroup | None:
        return self.h.coordinator.get_consumer_group(GROUP)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    topics = InMemoryTopics()
    topics.create("orders", 6)
    topics.create("audit", 2)
    b = Broker(tmp_path, topics, WALL_EPOCH, {"log.cleaner.delete.retention.ms": 60_000})
    yield b
    b.logs.close()


def state_of(b: Broker) -> dict[str, Any]:
    """Everything a consumer group's records determine."""
    group = b.group
    assert group is not None
    return {
        "epochs": (group.group_epoch, group.assignment_epoch, group.metadata_hash),
        "state": group.state,
        "members": dict(group.members),
        "target": dict(group.target),
        "owners": dict(group.owners),
        "static": dict(group.static_members),
        "names": +group.subscribed_names,
        "regex_counts": +group.regex_counts,
        "regexes": {r: (v.topics, v.version, v.timestamp_ms) for r, v in group.regexes.items()},
        "described": b.h.coordinator.describe_consumer_groups([GROUP]),
    }


def members() -> list[Member]:
    return [
        Member("m1", topics=("orders",)),
        Member("m2", regex="aud.*|ord.*"),
        Member("m3", topics=("orders", "audit"), instance_id="i3"),
    ]


def test_a_stable_group_is_rebuilt_equal_and_its_members_keep_their_epochs(broker: Broker) -> None:
    ms = members()
    for m in ms:
        assert broker.h.join(GROUP, m).error is ErrorCode.NONE
    converge(broker.h, GROUP, ms)
    before = state_of(broker)
    assert before["state"].value == "Stable" and len(before["members"]) == 3 and before["regexes"]
    restarted = broker.restart()
    assert state_of(restarted) == before
    for m in ms:  # no member is fenced: each heartbeat at its epoch is answered, nothing changes
        assert restarted.h.beat(GROUP, m).error is ErrorCode.NONE
    assert state_of(restarted) == before


def test_a_group_mid_reconciliation_is_rebuilt_equal_and_then_converges(broker: Broker) -> None:
    ms = members()
    for m in ms:
        broker.h.join(GROUP, m)
    converge(broker.h, GROUP, ms)
    newcomer = Member("m4", topics=("orders", "audit"))
    assert broker.h.join(GROUP, newcomer).error is ErrorCode.NONE
    # m1 learns what it must revoke but has not revoked it yet (it keeps owning its partitions).
    broker.h.beat(GROUP, ms[0], release_all=False)
    before = state_of(broker)
    assert before["state"].value in ("Assigning", "Reconciling")
    assert any(m.pending_revocation for m in before["members"].values())
    restarted = broker.restart()
    assert state_of(restarted) == before
    everyone = [*ms, newcomer]
    converge(restarted.h, GROUP, everyone)
    assert not owned_by_two(everyone)
    assigned = {(t, p) for m in everyone for t, parts in m.owned.items() for p in parts}
    assert len(assigned) == 6 + 2  # every partition of both topics, each once
    assert state_of(restarted.restart()) == state_of(restarted)


def test_leaves_and_a_deleted_group_stay_gone_after_a_restart_and_compaction(broker: Broker) -> None:
    ms = members()
    for m in ms:
        broker.h.join(GROUP, m)
    converge(broker.h, GROUP, ms)
    m2 = ms[1]
    assert broker.h.heartbeat(heartbeat_request(GROUP, m2.member_id, -1)).error is ErrorCode.NONE
    restarted = broker.restart()
    group = restarted.group
    assert group is not None and set(group.members) == {"m1", "m3"} and not group.regexes
    for m in (ms[0], ms[2]):
        assert restarted.h.heartbeat(heartbeat_request(GROUP, m.member_id, -1)).error is ErrorCode.NONE
    assert restarted.h.coordinator.delete_groups([GROUP]) == {GROUP: ErrorCode.NONE}
    again = restarted.restart()
    assert again.group is None and again.h.coordinator.describe_consumer_groups([GROUP])[0].error is (
        ErrorCode.GROUP_ID_NOT_FOUND
    )
    # Compaction: the tombstones stay while delete.retention.ms has not passed, then go; either way
    # nothing of the group comes back.
    partition = again.manager.sink.partition_for(GROUP)
    plog = again.logs.get_log(OFFSETS_TOPIC, partition)
    plog.roll()
    kept = compact(plog, again.wall)
    assert kept > 0
    assert again.restart().group is None
    later = again.restart(gap_ms=60_001)
    plog = later.logs.get_log(OFFSETS_TOPIC, partition)
    plog.roll()
    assert compact(plog, later.wall) == 0  # only tombstones were left, all past retention
    assert later.restart().group is None


def compact(plog: Any, wall: Callable[[], int]) -> int:
    """Compact the partition now; returns how many records it keeps."""
    plan = cleaner.compact(plog, wall(), force=True)
    assert plan is not None
    return int(plan.records_after)


def test_the_restart_uses_a_fresh_clock_and_regex_timestamps_keep_their_wall_time(broker: Broker) -> None:
    broker.h.clock.advance(123_456)  # the first process ran a while before the group formed
    m = Member("m", regex="ord.*")
    broker.h.join(GROUP, m)
    converge(broker.h, GROUP, [m])
    group = broker.group
    assert group is not None
    (resolved,) = group.regexes.values()
    restarted = broker.restart()
    assert restarted.h.clock.now_ms() > resolved.timestamp_ms  # a new process, later
    group = restarted.group
    assert group is not None
    (again,) = group.regexes.values()
    assert again.timestamp_ms == resolved.timestamp_ms  # the stored epoch time, as it was
