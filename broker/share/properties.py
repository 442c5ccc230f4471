"""The broker properties of share groups, share partitions and `__share_group_state`, with Kafka's
names and defaults (Kafka 4.1; the `min`/`max` ones bound the group configs): a module of its own,
with no imports, so that checking a config's property names does not import the share partitions."""

from __future__ import annotations

# property name -> default
PROPERTIES: dict[str, int] = {
    "group.share.session.timeout.ms": 45_000,
    "group.share.min.session.timeout.ms": 45_000,
    "group.share.max.session.timeout.ms": 60_000,
    "group.share.heartbeat.interval.ms": 5_000,
    "group.share.min.heartbeat.interval.ms": 5_000,
    "group.share.max.heartbeat.interval.ms": 15_000,
    "group.share.max.size": 200,
    "group.share.record.lock.duration.ms": 30_000,
    "group.share.min.record.lock.duration.ms": 15_000,
    "group.share.max.record.lock.duration.ms": 60_000,
    "group.share.delivery.count.limit": 5,
    "group.share.partition.max.record.locks": 2_000,
    "share.coordinator.state.topic.num.partitions": 50,
    "share.coordinator.state.topic.segment.bytes": 104_857_600,
    "share.coordinator.snapshot.update.records.per.snapshot": 500,
    "share.coordinator.state.topic.prune.interval.ms": 300_000,
    "share.coordinator.cold.partition.snapshot.interval.ms": 300_000,
}
