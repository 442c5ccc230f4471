"""StreamsGroupHeartbeat's request checks before the group is looked at (Kafka's
throwIfStreamsGroupHeartbeatRequestIsInvalid and ...UsingUnsupportedFeatures): INVALID_REQUEST with
Kafka's messages, STREAMS_INVALID_TOPOLOGY for a changelog topic with a partition count."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kafkito.broker.coordinator.streams.requests import (
    JOIN_EPOCH,
    STATIC_LEAVE_EPOCH,
    StreamsHeartbeatRequest,
)
from kafkito.broker.coordinator.streams.topology import invalid_topology_reason
from kafkito.protocol.errors import ErrorCode


def validate_heartbeat(request: StreamsHeartbeatRequest) -> tuple[ErrorCode, str] | None:
    invalid = ErrorCode.INVALID_REQUEST
    if request.topology is not None:
        for subtopology in request.topology.subtopologies:
            if subtopology.source_topic_regex:
                return invalid, "Regular expressions for source topics are not supported yet."
    empty = _empty_field(request)
    if empty is not None:
        return invalid, f"{empty} can't be empty."
    if request.member_epoch == JOIN_EPOCH:
        problem = _join_problem(request)
        if problem is not None:
            return problem
    elif request.member_epoch == STATIC_LEAVE_EPOCH:
        if request.instance_id is None:
            return invalid, "InstanceId can't be null."
    elif request.member_epoch < STATIC_LEAVE_EPOCH:
        return invalid, f"MemberEpoch is {request.member_epoch}, but must be greater than or equal to -2."
    return _shape_problem(request)


def _join_problem(request: StreamsHeartbeatRequest) -> tuple[ErrorCode, str] | None:
    invalid = ErrorCode.INVALID_REQUEST
    if request.rebalance_timeout_ms == -1:
        return invalid, "RebalanceTimeoutMs must be provided in first request."
    tasks = (request.active_tasks, request.standby_tasks, request.warmup_tasks)
    for owned, role in zip(tasks, ("ActiveTasks", "StandbyTasks", "WarmupTasks"), strict=True):
        if owned:
            return invalid, f"{role} must be empty when (re-)joining."
    if request.topology is None:
        return invalid, "Topology must be non-null when (re-)joining."
    reason = invalid_topology_reason(request.topology)
    if reason is not None:
        return ErrorCode.STREAMS_INVALID_TOPOLOGY, reason
    return None


def _empty_field(request: StreamsHeartbeatRequest) -> str | None:
    """Kafka's throwIfEmptyString: a string given but blank."""
    for value, name in (
        (request.member_id, "MemberId"),
        (request.group_id, "GroupId"),
        (request.instance_id, "InstanceId"),
        (request.rack_id, "RackId"),
    ):
        if value is not None and not value.strip():
            return name
    return None


def _shape_problem(request: StreamsHeartbeatRequest) -> tuple[ErrorCode, str] | None:
    tasks = (request.active_tasks, request.standby_tasks, request.warmup_tasks)
    if any(t is not None for t in tasks) and any(t is None for t in tasks):
        return ErrorCode.INVALID_REQUEST, "If one task-type is non-null, all must be non-null."
    if request.member_epoch != JOIN_EPOCH and request.topology is not None:
        return ErrorCode.INVALID_REQUEST, "Topology can only be provided when (re-)joining."
    return None


# Kafka's Topic.isInternal names and Topic.isValid's characters.
KAFKA_INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
_LEGAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def invalid_topic_names(names: Sequence[str]) -> str | None:
    """KafkaApis' check of a heartbeat's topology before the coordinator sees it (STREAMS_INVALID_TOPOLOGY):
    Kafka's internal topics are prohibited, and every name must be a valid topic name."""
    prohibited = [n for n in names if n in KAFKA_INTERNAL_TOPICS]
    if prohibited:
        return (
            f"Use of Kafka internal topics {','.join(prohibited)} in a Kafka Streams topology is prohibited."
        )
    invalid = [n for n in names if not (0 < len(n) <= 249 and n not in (".", "..") and set(n) <= _LEGAL)]
    if invalid:
        return f"Topic names {','.join(invalid)} are not valid topic names."
    return None


def topology_topics(subtopologies: Iterable[Any]) -> list[str]:
    """Every topic a topology names, in its order (a request's or a described group's)."""
    names: list[str] = []
    for s in subtopologies or ():  # a described group's arrays may be null
        names += list(s.source_topics or ()) + list(s.repartition_sink_topics or ())
        names += [t.name for t in s.repartition_source_topics or ()]
        names += [t.name for t in s.state_changelog_topics or ()]
    return list(dict.fromkeys(names))
