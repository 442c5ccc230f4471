"""Which committed offsets have expired: Kafka's retention rules for each kind of group (§7)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kafkito.broker.coordinator.classic.group import CONSUMER_PROTOCOL_TYPE, ClassicGroup
from kafkito.broker.coordinator.classic.state import GroupState
from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition

if TYPE_CHECKING:  # imported with the first consumer group, not at start
    from kafkito.broker.coordinator.consumer.group import ConsumerGroup


def expired_offsets(
    group: ClassicGroup | ConsumerGroup, now_ms: int, retention_ms: int
) -> list[TopicPartition]:
    """The partitions of `group` whose offsets are past retention at `now_ms` (coordinator clock).

    - Empty group with a protocol type: every offset, aged from when the group became Empty
      (from its commit time when that is unknown).
    - Stable `consumer` group that knows its subscription: offsets of topics nobody subscribes to,
      aged from their commit time.
    - No protocol type (simple consumers, admin commits): every offset, aged from its commit time.
    - Any other group: nothing.
    - KIP-848 consumer group: offsets of topics it does not subscribe to (every one when it has no
      members), aged from their commit time, as Kafka's ConsumerGroup.
    An offset with a write in flight never expires; an explicit expiry timestamp (OffsetCommit
    v2-v4 retention time) takes precedence over the age rule.
    """
    if not isinstance(group, ClassicGroup):
        return _expired(group, now_ms, retention_ms, _commit_time, group.is_subscribed_to_topic)
    base: Callable[[OffsetAndMetadata], int]
    subscribed: set[str] | frozenset[str] = frozenset()
    if group.protocol_type is None:
        base = _commit_time
    elif group.is_(GroupState.EMPTY):
        became_empty = group.state_timestamp_ms
        base = _commit_time if became_empty is None else (lambda _o: became_empty)
    elif (
        group.protocol_type == CONSUMER_PROTOCOL_TYPE
        and group.subscribed_topics is not None
        and group.is_(GroupState.STABLE)
    ):
        base = _commit_time
        subscribed = group.subscribed_topics
    else:
        return []
    return _expired(group, now_ms, retention_ms, base, subscribed.__contains__)


def _expired(
    group: ClassicGroup | ConsumerGroup,
    now_ms: int,
    retention_ms: int,
    base: Callable[[OffsetAndMetadata], int],
    subscribed: Callable[[str], bool],
) -> list[TopicPartition]:
    pending = group.pending_offset_commits
    expired: list[TopicPartition] = []
    for tp, offset in group.offsets.items():
        if tp in pending or subscribed(tp.topic):
            continue
        expire_at = offset.expire_timestamp_ms
        if expire_at is not None:
            if now_ms >= expire_at:
                expired.append(tp)
        elif now_ms - base(offset) >= retention_ms:
            expired.append(tp)
    return expired


def _commit_time(offset: OffsetAndMetadata) -> int:
    return offset.commit_timestamp_ms
