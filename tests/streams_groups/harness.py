"""Drives a GroupCoordinator's streams groups in virtual time: a word-count-like topology, members
that behave as Kafka Streams clients (report what they own, give up what they are told), restarts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kafkito.broker.coordinator import CoordinatorConfig, GroupCoordinator, InMemoryRecordSink
from kafkito.broker.coordinator.consumer.topics import InMemoryTopics
from kafkito.broker.coordinator.streams.config import StreamsConfig
from kafkito.broker.coordinator.streams.group import StreamsGroup
from kafkito.broker.coordinator.streams.requests import StreamsHeartbeatRequest, StreamsHeartbeatResult
from kafkito.broker.coordinator.streams.tasks import TaskSet, task_map
from kafkito.broker.coordinator.streams.topology import StreamsTopology, Subtopology, TopicInfo
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import ManualClock, Timer

SESSION_MS = 45_000
REBALANCE_MS = 30_000
APP = "wordcount"
REPARTITION = f"{APP}-counts-repartition"
CHANGELOG = f"{APP}-counts-changelog"


def word_count(epoch: int = 1, source: str = "words") -> StreamsTopology:
    """Two subtopologies: "0" reads the source and writes the repartition topic, "1" reads it and keeps
    a state store (its changelog)."""
    return StreamsTopology(
        epoch,
        (
            Subtopology("0", source_topics=(source,), repartition_sink_topics=(REPARTITION,)),
            Subtopology(
                "1",
                repartition_source_topics=(TopicInfo(REPARTITION),),
                state_changelog_topics=(TopicInfo(CHANGELOG, configs=(("cleanup.policy", "compact"),)),),
            ),
        ),
    )


@dataclass
class App:
    """One Kafka Streams client (one thread): what it remembers and owns."""

    member_id: str
    process_id: str = ""
    instance_id: str | None = None
    topology: StreamsTopology = field(default_factory=word_count)
    endpoint: tuple[str, int] | None = None
    epoch: int = 0
    owned: TaskSet = field(default_factory=TaskSet.empty)
    endpoint_epoch: int = 0
    fenced: bool = False
    told: TaskSet | None = None  # what it was last told to own, not acted on yet

    def __post_init__(self) -> None:
        if not self.process_id:
            self.process_id = f"process-{self.member_id}"

    def owned_wire(self) -> tuple[object, ...]:
        return self.owned.wire()


class Harness:
    """A coordinator on a ManualClock with an in-memory sink and topics."""

    def __init__(self, streams: StreamsConfig | None = None, start_ms: int = 0) -> None:
        self.config = CoordinatorConfig()
        # Assigning at every change unless a test asks for Kafka's delays.
        self.streams = streams or StreamsConfig(initial_rebalance_delay_ms=0, assignment_interval_ms=0)
        self.clock = ManualClock(start_ms)
        self.timer = Timer(self.clock)
        self.sink = InMemoryRecordSink()
        self.topics = InMemoryTopics()
        self.coordinator = GroupCoordinator(
            self.config, self.clock, self.timer, self.sink, topics=self.topics, streams_config=self.streams
        )
        self.created: list[str] = []

    def heartbeat(self, request: StreamsHeartbeatRequest) -> StreamsHeartbeatResult:
        replies: list[StreamsHeartbeatResult] = []
        self.coordinator.streams_group_heartbeat(request, replies.append)
        assert len(replies) == 1, f"expected one answer, got {replies}"
        return replies[0]

    def create_internal_topics(self, result: StreamsHeartbeatResult) -> None:
        """What the broker does with the topics a heartbeat names (Kafka's auto topic creation)."""
        for topic in result.internal_topics_to_create:
            if self.topics.by_name(topic.name) is None:
                self.topics.create(topic.name, topic.partitions)
                self.created.append(topic.name)

    def join(self, app: App, group_id: str = APP, *, create: bool = True) -> StreamsHeartbeatResult:
        request = StreamsHeartbeatRequest(
            group_id,
            app.member_id,
            0,
            app.endpoint_epoch,
            app.instance_id,
            None,
            REBALANCE_MS,
            app.topology,
            (),
            (),
            (),
            app.process_id,
            app.endpoint,
            (),
        )
        result = self._apply(app, self.heartbeat(request))
        if create:
            self.create_internal_topics(result)
        return result

    def beat(self, app: App, group_id: str = APP, *, release: bool = True) -> StreamsHeartbeatResult:
        """One heartbeat reporting what the app owns; with `release` it gives up at once what it was told
        to give up (its next heartbeat reports it), else it keeps it and takes nothing new."""
        if release and app.told is not None:
            app.owned, app.told = app.told, None
        active, standby, warmup = app.owned.wire()
        request = StreamsHeartbeatRequest(
            group_id,
            app.member_id,
            app.epoch,
            app.endpoint_epoch,
            app.instance_id,
            active_tasks=active,
            standby_tasks=standby,
            warmup_tasks=warmup,
        )
        result = self._apply(app, self.heartbeat(request), release)
        self.create_internal_topics(result)
        return result

    def leave(self, app: App, group_id: str = APP, *, static: bool = False) -> StreamsHeartbeatResult:
        request = StreamsHeartbeatRequest(
            group_id, app.member_id, -2 if static else -1, instance_id=app.instance_id
        )
        result = self.heartbeat(request)
        app.owned = TaskSet.empty()
        return result

    def _apply(
        self, app: App, result: StreamsHeartbeatResult, release: bool = True
    ) -> StreamsHeartbeatResult:
        if result.error in (ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID):
            app.fenced = True
            app.owned = TaskSet.empty()
            app.epoch = 0
            return result
        if result.error is not ErrorCode.NONE:
            return result
        app.epoch = result.member_epoch
        app.endpoint_epoch = result.endpoint_information_epoch
        if result.active_tasks is not None:
            assert result.standby_tasks is not None and result.warmup_tasks is not None
            told = TaskSet(
                task_map(result.active_tasks), task_map(result.standby_tasks), task_map(result.warmup_tasks)
            )
            if release:
                app.owned = told
            else:  # it keeps all it had (revoking nothing yet) and takes nothing new, for now
                app.told = told
        return result

    def group(self, group_id: str = APP) -> StreamsGroup:
        group = self.coordinator.get_streams_group(group_id)
        assert group is not None
        return group

    def restart(self) -> GroupCoordinator:
        """A fresh coordinator replaying everything written so far (what a broker restart does)."""
        fresh = GroupCoordinator(
            self.config,
            self.clock,
            Timer(self.clock),
            InMemoryRecordSink(),
            topics=self.topics,
            streams_config=self.streams,
        )
        for record in self.sink.records:
            fresh.replay(record)
        fresh.on_loaded([APP])
        return fresh


def converge(h: Harness, apps: Iterable[App], group_id: str = APP, rounds: int = 12) -> None:
    """Heartbeat every app (each giving up at once what it must) until the group is Stable."""
    apps = list(apps)
    for _ in range(rounds):
        for app in apps:
            h.beat(app, group_id)
        if h.group(group_id).state.value == "Stable":
            return
    raise AssertionError(f"group {group_id} did not converge: {h.group(group_id)}")


def active_owned_twice(apps: Iterable[App]) -> set[tuple[str, int]]:
    """Active tasks two apps believe they run at the same time (must always be empty)."""
    seen: set[tuple[str, int]] = set()
    twice: set[tuple[str, int]] = set()
    for app in apps:
        for subtopology, partitions in app.owned.active.items():
            for p in partitions:
                (twice if (subtopology, p) in seen else seen).add((subtopology, p))
    return twice
