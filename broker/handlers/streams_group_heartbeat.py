"""StreamsGroupHeartbeat (88, KIP-1071): a Kafka Streams client joins, heartbeats or leaves its streams group.

v0 Kafka 4.1's first stable version; v1 (KIP-1331) the same request, its answer adds
TopologyDescriptionRequired (always false here: no topology description plugin) and carries the
acceptable recovery lag as an int64 (v0: an int32). The answer goes out once the records the heartbeat
wrote are in `__consumer_offsets`. The internal topics the coordinator found missing (repartition and
changelog topics, with their partition counts and configs) are created by the broker before the answer,
as Kafka's KafkaApis asks its topic creation manager to. With `streams.version` finalized at 0 streams
groups are off: UNSUPPORTED_VERSION, as Kafka.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import structlog

from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.streams.internal_topics import InternalTopic, StatusCode
from kafkito.broker.coordinator.streams.requests import StreamsHeartbeatRequest, StreamsHeartbeatResult
from kafkito.broker.coordinator.streams.tasks import WireTasks
from kafkito.broker.coordinator.streams.topology import (
    CopartitionGroup,
    StreamsTopology,
    Subtopology,
    TopicInfo,
)
from kafkito.broker.coordinator.streams.validate import invalid_topic_names, topology_topics
from kafkito.broker.handlers.parked import Parked
from kafkito.protocol.errors import ErrorCode, KafkaError

API_KEY = 88
MISSING_INTERNAL_TOPICS = StatusCode.MISSING_INTERNAL_TOPICS
VERSIONS = (0, 1)
STREAMS_VERSION = "streams.version"

log = structlog.get_logger("kafkito.handlers")


class KeyValue(Protocol):
    key: str
    value: str


class TopicInfoBody(Protocol):
    name: str
    partitions: int
    replication_factor: int
    topic_configs: Sequence[KeyValue]


class CopartitionGroupBody(Protocol):
    source_topics: Sequence[int]
    source_topic_regex: Sequence[int]
    repartition_source_topics: Sequence[int]


class SubtopologyBody(Protocol):
    subtopology_id: str
    source_topics: Sequence[str]
    source_topic_regex: Sequence[str]
    state_changelog_topics: Sequence[TopicInfoBody]
    repartition_sink_topics: Sequence[str]
    repartition_source_topics: Sequence[TopicInfoBody]
    copartition_groups: Sequence[CopartitionGroupBody]


class TopologyBody(Protocol):
    epoch: int
    subtopologies: Sequence[SubtopologyBody]


class TaskIdsBody(Protocol):
    subtopology_id: str
    partitions: Sequence[int]


class EndpointBody(Protocol):
    host: str
    port: int


class StreamsGroupHeartbeatRequestBody(Protocol):
    group_id: str
    member_id: str
    member_epoch: int
    endpoint_information_epoch: int
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: int
    topology: TopologyBody | None
    active_tasks: Sequence[TaskIdsBody] | None
    standby_tasks: Sequence[TaskIdsBody] | None
    warmup_tasks: Sequence[TaskIdsBody] | None
    process_id: str | None
    user_endpoint: EndpointBody | None
    client_tags: Sequence[KeyValue] | None
    shutdown_application: bool


def streams_groups_off(ctx: RequestContext) -> bool:
    """`streams.version` finalized at 0: the streams-group APIs answer UNSUPPORTED_VERSION, as Kafka."""
    return ctx.configs.features.levels.get(STREAMS_VERSION, 0) < 1


def _configs(pairs: Sequence[KeyValue]) -> tuple[tuple[str, str], ...]:
    return tuple((kv.key, kv.value) for kv in pairs)


def _topic(info: TopicInfoBody) -> TopicInfo:
    return TopicInfo(info.name, info.partitions, info.replication_factor, _configs(info.topic_configs))


def _subtopology(s: SubtopologyBody) -> Subtopology:
    return Subtopology(
        s.subtopology_id,
        tuple(s.source_topics),
        tuple(s.source_topic_regex),
        tuple(_topic(t) for t in s.state_changelog_topics),
        tuple(s.repartition_sink_topics),
        tuple(_topic(t) for t in s.repartition_source_topics),
        tuple(
            CopartitionGroup(
                tuple(g.source_topics), tuple(g.source_topic_regex), tuple(g.repartition_source_topics)
            )
            for g in s.copartition_groups
        ),
    )


def _tasks(tasks: Sequence[TaskIdsBody] | None) -> WireTasks | None:
    if tasks is None:
        return None
    return tuple((t.subtopology_id, tuple(t.partitions)) for t in tasks)


def heartbeat_of(ctx: RequestContext, request: StreamsGroupHeartbeatRequestBody) -> StreamsHeartbeatRequest:
    topology = request.topology
    endpoint = request.user_endpoint
    tags = request.client_tags
    return StreamsHeartbeatRequest(
        request.group_id,
        request.member_id,
        request.member_epoch,
        request.endpoint_information_epoch,
        request.instance_id,
        request.rack_id,
        request.rebalance_timeout_ms,
        None
        if topology is None
        else StreamsTopology(topology.epoch, tuple(_subtopology(s) for s in topology.subtopologies)),
        _tasks(request.active_tasks),
        _tasks(request.standby_tasks),
        _tasks(request.warmup_tasks),
        request.process_id,
        None if endpoint is None else (endpoint.host, endpoint.port),
        None if tags is None else _configs(tags),
        request.shutdown_application,
        ctx.client_id or "",
        "/" + ctx.peer_host,
        ctx.version,
    )


def create_internal_topics(ctx: RequestContext, group_id: str, topics: Sequence[InternalTopic]) -> str:
    """Create the internal topics the coordinator asked for, as Kafka's KafkaApis does with the caller's
    principal: nothing without CREATE on the cluster or on each topic; one that appeared meanwhile is
    skipped; the next heartbeat asks again for what is still missing. Returns what the
    MISSING_INTERNAL_TOPICS status adds (Kafka's "; Unauthorized to CREATE on topics a, b." or
    "; Creation failed: a (why)."), or ""."""
    from kafkito.broker.security.streams_checks import unauthorized_to_create

    unauthorized = unauthorized_to_create(ctx, [t.name for t in topics])
    if unauthorized:
        return f"; Unauthorized to CREATE on topics {', '.join(unauthorized)}."
    failed: list[str] = []
    for topic in topics:
        if ctx.topics.get(topic.name) is not None:
            continue
        try:
            ctx.topics.create(
                topic.name,
                topic.partitions,
                topic.replication_factor,
                dict(topic.configs),
                validate_only=False,
            )
        except KafkaError as exc:
            log.warning(
                "streams_group.internal_topic_failed", group=group_id, topic=topic.name, error=exc.code.name
            )
            failed.append(f"{topic.name} ({exc.message or exc.code.name})")
            continue
        log.info(
            "streams_group.internal_topic_created",
            group=group_id,
            topic=topic.name,
            partitions=topic.partitions,
        )
    return f"; Creation failed: {', '.join(failed)}." if failed else ""


def _add_to_missing_status(statuses: list[dict[str, Any]], added: str) -> None:
    """Kafka appends to the MISSING_INTERNAL_TOPICS status, or adds one with the text alone."""
    for status in statuses:
        if status["status_code"] == MISSING_INTERNAL_TOPICS:
            status["status_detail"] += added
            return
    statuses.append(dict(status_code=MISSING_INTERNAL_TOPICS, status_detail=added.removeprefix("; ")))


def _task_ids(tasks: WireTasks | None) -> list[dict[str, Any]] | None:
    if tasks is None:
        return None
    return [dict(subtopology_id=s, partitions=list(p)) for s, p in tasks]


def _topic_partitions(pairs: Sequence[tuple[str, Sequence[int]]]) -> list[dict[str, Any]]:
    return [dict(topic=t, partitions=list(p)) for t, p in pairs]


def handle(ctx: RequestContext, request: StreamsGroupHeartbeatRequestBody) -> Any:
    group_id = request.group_id

    def build(result: StreamsHeartbeatResult) -> Any:
        statuses = [dict(status_code=s.code, status_detail=s.detail) for s in result.status or ()]
        if result.internal_topics_to_create:
            added = create_internal_topics(ctx, group_id, result.internal_topics_to_create)
            if added:
                _add_to_missing_status(statuses, added)
        endpoints = result.partitions_by_user_endpoint
        # An error answer carries the schema's defaults: v0's int32 lag is 0, v1's int64 one -1.
        legacy_lag = result.acceptable_recovery_lag if result.error is ErrorCode.NONE else 0
        lag = dict(acceptable_recovery_lag_legacy=legacy_lag)
        if ctx.version >= 1:
            lag = dict(
                acceptable_recovery_lag=result.acceptable_recovery_lag, topology_description_required=False
            )
        return ctx.response(
            throttle_time_ms=0,
            error_code=result.error,
            error_message=result.error_message,
            member_id=result.member_id,
            member_epoch=result.member_epoch,
            heartbeat_interval_ms=result.heartbeat_interval_ms,
            task_offset_interval_ms=result.task_offset_interval_ms,
            status=statuses,
            active_tasks=_task_ids(result.active_tasks),
            standby_tasks=_task_ids(result.standby_tasks),
            warmup_tasks=_task_ids(result.warmup_tasks),
            endpoint_information_epoch=result.endpoint_information_epoch,
            partitions_by_user_endpoint=None
            if endpoints is None
            else [
                dict(
                    user_endpoint=dict(host=e.user_endpoint[0], port=e.user_endpoint[1]),
                    active_partitions=_topic_partitions(e.active_partitions),
                    standby_partitions=_topic_partitions(e.standby_partitions),
                )
                for e in endpoints
            ],
            **lag,
        )

    if streams_groups_off(ctx):
        return build(
            StreamsHeartbeatResult(ErrorCode.UNSUPPORTED_VERSION, "The version of API is not supported.")
        )
    if request.topology is not None:
        problem = invalid_topic_names(topology_topics(request.topology.subtopologies))
        if problem is not None:
            return build(StreamsHeartbeatResult(ErrorCode.STREAMS_INVALID_TOPOLOGY, problem))
    parked: Parked[StreamsHeartbeatResult] = Parked(build)
    ctx.groups.streams_group_heartbeat(heartbeat_of(ctx, request), parked.callback)
    return parked.response()
