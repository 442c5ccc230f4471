"""Consumer groups as the console shows them: state, protocol, members and their assignment, and the
committed offset and lag of every partition the group has an offset for or is assigned."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkito.broker.console.topics import NotFound

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

TopicPartitions = dict[str, tuple[int, ...]]


def _end_offset(broker: Broker, topic: str, partition: int) -> int | None:
    info = broker.logs.topic(topic)
    if info is None or partition >= info.partitions:
        return None
    return broker.logs.get_log(topic, partition).high_watermark


def _committed(broker: Broker, group_id: str) -> dict[tuple[str, int], int]:
    _error, offsets = broker.coordinator.fetch_offsets(group_id)
    return {(tp[0], tp[1]): po.offset for tp, po in offsets.items() if po.offset >= 0}


def _classic_assignments(broker: Broker, group_id: str) -> dict[str, TopicPartitions]:
    from kafkito.broker.coordinator.consumer.classic_protocol import decode_assignment

    summary = broker.coordinator.describe_groups([group_id])[0].summary
    if summary.protocol_type != "consumer":
        return {}
    return {m.member_id: decode_assignment(m.assignment) or {} for m in summary.members}


def _consumer_assignments(broker: Broker, group_id: str) -> dict[str, TopicPartitions]:
    described = broker.coordinator.describe_consumer_groups([group_id])[0]
    out: dict[str, TopicPartitions] = {}
    for member in described.members:
        parts: TopicPartitions = {}
        for topic_id, partitions in member.assignment:
            info = broker.logs.topic_by_id(topic_id)
            parts[info.name if info is not None else str(topic_id)] = tuple(partitions)
        out[member.member_id] = parts
    return out


def group_list(broker: Broker) -> list[dict[str, Any]]:
    coordinator = broker.coordinator
    rows = []
    ids = [g.group_id for g in coordinator.groups()] + [g.group_id for g in coordinator.consumer_groups()]
    for group_id in sorted(set(ids)):
        described = broker.steering.describe_group(group_id)
        if described is None:
            continue
        committed = _committed(broker, group_id)
        lag = 0
        for (topic, partition), offset in committed.items():
            end = _end_offset(broker, topic, partition)
            lag += max((end or 0) - offset, 0)
        rows.append(
            {
                "group_id": group_id,
                "state": described["state"],
                "protocol": _protocol_name(described),
                "members": len(described["members"]),
                "generation": described["generation"],
                "lag": lag,
            }
        )
    return rows


def _protocol_name(described: dict[str, Any]) -> str:
    """classic, consumer or share, as Kafka's group type."""
    return "consumer" if described["type"] == "consumer" else str(described["type"])


def group_detail(broker: Broker, group_id: str) -> dict[str, Any]:
    described = broker.steering.describe_group(group_id)
    if described is None:
        raise NotFound(f"no group {group_id}")
    if described["type"] == "consumer":
        assignments = _consumer_assignments(broker, group_id)
    else:
        assignments = _classic_assignments(broker, group_id)
    owner: dict[tuple[str, int], str] = {}
    for member in described["members"]:
        parts = assignments.get(member["member_id"], {})
        member["assignment"] = [{"topic": t, "partitions": list(p)} for t, p in sorted(parts.items())]
        for topic, partitions in parts.items():
            for partition in partitions:
                owner[topic, partition] = member["member_id"]
    committed = _committed(broker, group_id)
    offsets = []
    for topic, partition in sorted(set(committed) | set(owner)):
        end = _end_offset(broker, topic, partition)
        offset = committed.get((topic, partition))
        lag = None if end is None or offset is None else max(end - offset, 0)
        member = owner.get((topic, partition))
        offsets.append(
            {
                "topic": topic,
                "partition": partition,
                "committed_offset": offset,
                "end_offset": end,
                "lag": lag,
                "member_id": member,
            }
        )
    described["protocol_kind"] = _protocol_name(described)
    described["offsets"] = offsets
    described["lag"] = sum(row["lag"] or 0 for row in offsets)
    return described


async def reset_offsets(broker: Broker, group_id: str, topic: str, to: str) -> dict[str, Any]:
    """Commit the `earliest` or `latest` offset of each of `topic`'s partitions for the group, as
    Kafka's reset tool does: only while the group has no members. Returns the partitions' errors."""
    import asyncio

    from kafkito.broker.coordinator.requests import OffsetCommitRequest
    from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition

    described = broker.steering.describe_group(group_id)
    if described is not None and described["members"]:
        raise ValueError(f"group {group_id} has active members: stop them before resetting its offsets")
    if to not in ("earliest", "latest"):
        raise ValueError(f"reset to 'earliest' or 'latest', not {to!r}")
    info = broker.logs.topic(topic)
    if info is None:
        raise NotFound(f"no topic {topic}")
    offsets = {}
    for partition in range(info.partitions):
        log = broker.logs.get_log(topic, partition)
        target = log.log_start_offset if to == "earliest" else log.high_watermark
        offsets[TopicPartition(topic, partition)] = OffsetAndMetadata(target, "", -1, broker.clock.now_ms())
    done: asyncio.Future[dict[Any, Any]] = asyncio.get_running_loop().create_future()
    request = OffsetCommitRequest(group_id, "", None, -1, offsets)

    def answered(errors: dict[Any, Any]) -> None:
        if not done.done():
            done.set_result(errors)

    broker.coordinator.commit_offsets(request, answered)
    errors = await asyncio.wait_for(done, 10)
    return {
        "group_id": group_id,
        "topic": topic,
        "to": to,
        "partitions": {
            str(tp[1]): {"offset": offsets[tp].offset, "error": getattr(err, "name", str(err))}
            for tp, err in errors.items()
        },
    }
