"""The topology a streams application sends with its first heartbeat (Kafka's StreamsTopology).

Subtopologies read source topics (the user's) and repartition source topics (internal, created by
the coordinator), write repartition sink topics, and keep state in changelog topics (internal);
a copartition group names, by index into the subtopology's lists, topics that must have the same
number of partitions. The shape is the one of the StreamsGroupTopology record value.
"""

from __future__ import annotations

from typing import NamedTuple

Configs = tuple[tuple[str, str], ...]


class TopicInfo(NamedTuple):
    """An internal topic: `partitions` 0 means "decided by the coordinator" (always 0 for changelogs)."""

    name: str
    partitions: int = 0
    replication_factor: int = 0
    configs: Configs = ()


class CopartitionGroup(NamedTuple):
    """Indexes into the subtopology's source topics, source regexes and repartition source topics."""

    source_topics: tuple[int, ...] = ()
    source_topic_regex: tuple[int, ...] = ()
    repartition_source_topics: tuple[int, ...] = ()


class Subtopology(NamedTuple):
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    source_topic_regex: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    copartition_groups: tuple[CopartitionGroup, ...] = ()

    def input_topics(self) -> tuple[str, ...]:
        """The topics whose partitions are this subtopology's tasks."""
        return self.source_topics + tuple(t.name for t in self.repartition_source_topics)

    def copartitioned(self) -> list[set[str]]:
        """Each copartition group as topic names."""
        groups = []
        for group in self.copartition_groups:
            names = {self.source_topics[i] for i in group.source_topics if 0 <= i < len(self.source_topics)}
            reps = self.repartition_source_topics
            names |= {reps[i].name for i in group.repartition_source_topics if 0 <= i < len(reps)}
            groups.append(names)
        return groups


class StreamsTopology(NamedTuple):
    """A group's topology: its epoch (the application's topology version) and subtopologies by id."""

    epoch: int
    subtopologies: tuple[Subtopology, ...]

    def by_id(self) -> dict[str, Subtopology]:
        return {s.subtopology_id: s for s in self.subtopologies}

    def normalized(self) -> StreamsTopology:
        """Sorted by subtopology id: two topologies that differ only in order are equal."""
        return StreamsTopology(self.epoch, tuple(sorted(self.subtopologies, key=lambda s: s.subtopology_id)))

    def source_topics(self) -> set[str]:
        return {t for s in self.subtopologies for t in s.source_topics}

    def required_topics(self) -> set[str]:
        """Every topic the topology reads or keeps state in (its metadata decides the group's hash)."""
        names: set[str] = set()
        for s in self.subtopologies:
            names.update(s.source_topics)
            names.update(t.name for t in s.repartition_source_topics)
            names.update(t.name for t in s.state_changelog_topics)
        return names


def invalid_topology_reason(topology: StreamsTopology) -> str | None:
    """Kafka's throwIfInvalidTopology (STREAMS_INVALID_TOPOLOGY): changelogs have no partition count."""
    for subtopology in topology.subtopologies:
        for topic in subtopology.state_changelog_topics:
            if topic.partitions != 0:
                return (
                    f"Changelog topic {topic.name} must have an undefined partition count, "
                    f"but it is set to {topic.partitions}."
                )
    return None
