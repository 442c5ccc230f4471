"""A topology checked against the cluster (Kafka's InternalTopicManager.configureTopics).

Source topics must exist (else MISSING_SOURCE_TOPICS). Repartition topics without a partition count
take the largest input of the subtopology that writes them; copartitioned topics must agree (the
repartition topics among them are coerced); a changelog topic has as many partitions as its
subtopology has tasks. Internal topics that do not exist yet are returned for the broker to create
(MISSING_INTERNAL_TOPICS); one that exists with another partition count is
INCORRECTLY_PARTITIONED_TOPICS. Only a topology with none of these is ready: its subtopologies'
task counts are what the assignor assigns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from kafkito.broker.coordinator.streams.topology import Configs, StreamsTopology, TopicInfo


class StatusCode(IntEnum):
    """StreamsGroupHeartbeat's status codes."""

    STALE_TOPOLOGY = 0
    MISSING_SOURCE_TOPICS = 1
    INCORRECTLY_PARTITIONED_TOPICS = 2
    MISSING_INTERNAL_TOPICS = 3
    SHUTDOWN_APPLICATION = 4
    ASSIGNMENT_DELAYED = 5
    MISSING_CLIENT_TAGS = 6


class InvalidTopology(Exception):
    """The topology cannot be configured whatever the cluster holds (STREAMS_INVALID_TOPOLOGY)."""


class _TopicProblem(Exception):
    def __init__(self, status: StatusCode, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass(slots=True, frozen=True)
class InternalTopic:
    """An internal topic to create, as the coordinator asks the broker (CreatableTopic)."""

    name: str
    partitions: int
    replication_factor: int  # -1: the broker's default
    configs: Configs = ()


@dataclass(slots=True, frozen=True)
class ConfiguredTopology:
    """The topology at one metadata hash: tasks per subtopology when ready, else why not."""

    epoch: int
    metadata_hash: int
    task_counts: Mapping[str, int] = field(default_factory=dict)
    input_partitions: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    to_create: tuple[InternalTopic, ...] = ()
    status: StatusCode | None = None
    detail: str = ""

    @property
    def is_ready(self) -> bool:
        return self.status is None


PartitionCount = Callable[[str], int | None]


def summarize(topics: Iterable[str]) -> str:
    """Kafka's summarizeTopics: sorted names, comma separated."""
    return ", ".join(sorted(topics))


def configure(
    topology: StreamsTopology, partitions_of: PartitionCount, metadata_hash: int
) -> ConfiguredTopology:
    """The topology checked against the topics `partitions_of` knows (None: no such topic)."""
    try:
        missing = sorted(t for t in topology.source_topics() if partitions_of(t) is None)
        if missing:
            raise _TopicProblem(
                StatusCode.MISSING_SOURCE_TOPICS, f"Source topics {summarize(missing)} are missing."
            )
        decided = _decide_partition_counts(topology, partitions_of)

        def count_of(topic: str) -> int:
            existing = partitions_of(topic)
            if existing is not None:
                return existing
            return decided[topic]

        task_counts: dict[str, int] = {}
        inputs: dict[str, dict[str, int]] = {}
        for subtopology in topology.subtopologies:
            topics = {t: count_of(t) for t in subtopology.input_topics()}
            inputs[subtopology.subtopology_id] = topics
            task_counts[subtopology.subtopology_id] = max(topics.values(), default=0)
        to_create = _missing_internal_topics(topology, decided, partitions_of)
    except _TopicProblem as problem:
        return ConfiguredTopology(topology.epoch, metadata_hash, status=problem.status, detail=problem.detail)
    if to_create:
        detail = f"Internal topics are missing: {summarize(t.name for t in to_create)}"
        return ConfiguredTopology(
            topology.epoch,
            metadata_hash,
            task_counts,
            inputs,
            tuple(to_create),
            StatusCode.MISSING_INTERNAL_TOPICS,
            detail,
        )
    return ConfiguredTopology(topology.epoch, metadata_hash, task_counts, inputs)


def _missing_internal_topics(
    topology: StreamsTopology, decided: Mapping[str, int], partitions_of: PartitionCount
) -> list[InternalTopic]:
    """The internal topics to create; one that exists with another partition count is refused."""
    wanted: dict[str, InternalTopic] = {}
    for subtopology in topology.subtopologies:
        for info in (*subtopology.repartition_source_topics, *subtopology.state_changelog_topics):
            wanted[info.name] = _creatable(info, decided[info.name])
    to_create = []
    for name, topic in sorted(wanted.items()):
        existing = partitions_of(name)
        if existing is None:
            to_create.append(topic)
        elif existing != topic.partitions:
            raise _TopicProblem(
                StatusCode.INCORRECTLY_PARTITIONED_TOPICS,
                f"Existing topic {name} has different number of partitions: expected "
                f"{topic.partitions}, found {existing}",
            )
    return to_create


def _creatable(info: TopicInfo, partitions: int) -> InternalTopic:
    replication = info.replication_factor if info.replication_factor else -1
    return InternalTopic(info.name, partitions, replication, info.configs)


def _decide_partition_counts(topology: StreamsTopology, partitions_of: PartitionCount) -> dict[str, int]:
    """Partition counts of every internal topic: repartition topics, copartitioning, changelogs."""
    decided: dict[str, int] = {}
    repartition = {t.name: t for s in topology.subtopologies for t in s.repartition_source_topics}
    for name, info in repartition.items():
        if info.partitions:
            decided[name] = info.partitions

    def known(topic: str) -> int | None:
        if topic in repartition:
            return decided.get(topic)
        return partitions_of(topic)

    _repartition_counts(topology, repartition, decided, known)
    fixed = {name for name, info in repartition.items() if info.partitions}
    for subtopology in topology.subtopologies:
        for group in subtopology.copartitioned():
            _enforce_copartitioning(group, repartition.keys(), fixed, decided, partitions_of)
    for subtopology in topology.subtopologies:
        tasks = max((c for t in subtopology.input_topics() if (c := known(t)) is not None), default=0)
        for changelog in subtopology.state_changelog_topics:
            decided[changelog.name] = tasks
    return decided


def _repartition_counts(
    topology: StreamsTopology,
    repartition: Mapping[str, TopicInfo],
    decided: dict[str, int],
    known: PartitionCount,
) -> None:
    """Kafka's RepartitionTopics: each count from its writers' inputs, until all are known."""
    pending = [name for name in repartition if name not in decided]
    while pending:
        progress = False
        for name in list(pending):
            count = _written_partitions(topology, name, known)
            if count is not None:
                decided[name] = count
                pending.remove(name)
                progress = True
        if not progress:
            raise InvalidTopology(
                "Failed to compute number of partitions for all repartition topics, make sure all user input "
                "topics are created and all Pattern subscriptions match at least one topic in the cluster"
            )


def _written_partitions(topology: StreamsTopology, name: str, known: PartitionCount) -> int | None:
    """The largest known input of the subtopologies writing the repartition topic `name`."""
    counts = [
        c
        for s in topology.subtopologies
        if name in s.repartition_sink_topics
        for c in (known(t) for t in s.input_topics())
        if c is not None
    ]
    return max(counts) if counts else None


def _enforce_copartitioning(
    group: set[str],
    repartition: Iterable[str],
    fixed: set[str],
    decided: dict[str, int],
    partitions_of: PartitionCount,
) -> None:
    internal = group & set(repartition)
    external = {t: partitions_of(t) or 0 for t in group - internal}
    if external:
        counts = set(external.values())
        if len(counts) > 1:
            listing = ", ".join(f"{t}={c}" for t, c in sorted(external.items()))
            raise _TopicProblem(
                StatusCode.INCORRECTLY_PARTITIONED_TOPICS, f"Topics not co-partitioned: [{{{listing}}}]"
            )
        target = counts.pop()
    else:
        enforced = {decided[t] for t in internal & fixed}
        if len(enforced) > 1:
            listing = ", ".join(f"{t}={decided[t]}" for t in sorted(internal))
            raise InvalidTopology(
                f"Following topics do not have the same number of partitions: [{{{listing}}}]"
            )
        target = enforced.pop() if enforced else max(decided[t] for t in internal)
    for topic in sorted(internal):
        if topic not in fixed:
            decided[topic] = target
        elif decided[topic] != target:
            raise InvalidTopology(
                f"Number of partitions [{decided[topic]}] of repartition topic [{topic}] doesn't match "
                f"number of partitions [{target}] of the source topic."
            )
