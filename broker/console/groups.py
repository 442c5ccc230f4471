"""Consumer groups as the console shows them: state, protocol, members and their assignment, and the
committed offset and lag of every partition the group has an offset for or is assigned. Streams groups
are listed with them and described by `streams_groups`."""

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
    from kafkito.broker.console.streams_groups import streams_rows

    return sorted(rows + streams_rows(broker), key=lambda row: str(row["group_id"]))


def _protocol_name(described: dict[str, Any]) -> str:
    """classic, consumer or share, as Kafka's group type."""
    return "consumer" if described["type"] == "consumer" else str(described["type"])


def group_detail(broker: Broker, group_id: str) -> dict[str, Any]:
    from kafkito.broker.console.streams_groups import streams_detail

    streams = streams_detail(broker, group_id)
    if streams is not None:
        return streams
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


RESET_TARGETS = ("earliest", "latest", "offset", "time")


def _target(log: Any, to: str, offset: int | None, time_ms: int | None) -> int:
    """The offset a reset moves a partition to, as kafka-consumer-groups --reset-offsets picks it: an
    offset outside the log is clamped to its ends; a time with no record at or after it is the end."""
    start, end = log.log_start_offset, log.high_watermark
    if to == "earliest":
        return int(start)
    if to == "latest":
        return int(end)
    if to == "offset":
        if offset is None:
            raise ValueError("reset to an offset needs `offset`")
        return int(min(max(offset, start), end))
    if time_ms is None:
        raise ValueError("reset to a time needs `time` (epoch ms or ISO 8601)")
    found = log.offset_for_timestamp(time_ms)
    return int(end if found is None else found.offset)


def _plan(
    broker: Broker, topic: str, partitions: list[int] | None, to: str, offset: int | None, time_ms: int | None
) -> dict[int, int]:
    """Each chosen partition's target offset."""
    info = broker.logs.topic(topic)
    if info is None:
        raise NotFound(f"no topic {topic}")
    chosen = list(range(info.partitions)) if not partitions else sorted(set(partitions))
    for partition in chosen:
        if not 0 <= partition < info.partitions:
            raise NotFound(f"topic {topic} has no partition {partition}")
    return {p: _target(broker.logs.get_log(topic, p), to, offset, time_ms) for p in chosen}


async def reset_offsets(
    broker: Broker,
    group_id: str,
    topic: str,
    to: str,
    *,
    partitions: list[int] | None = None,
    offset: int | None = None,
    time_ms: int | None = None,
    preview: bool = False,
) -> dict[str, Any]:
    """Move the group's committed offsets of `topic` (or of some of its partitions) to the earliest or
    latest offset, to an offset or to a time, as Kafka's reset tool does: only while the group has no
    members, and with `preview` (the tool's --dry-run) only saying what it would commit."""
    import asyncio

    from kafkito.broker.coordinator.requests import OffsetCommitRequest
    from kafkito.broker.coordinator.results import OffsetAndMetadata, TopicPartition

    described = broker.steering.describe_group(group_id)
    if described is not None and described["members"]:
        raise ValueError(f"group {group_id} has active members: stop them before resetting its offsets")
    if to not in RESET_TARGETS:
        raise ValueError(f"reset to one of {', '.join(RESET_TARGETS)}, not {to!r}")
    plan = _plan(broker, topic, partitions, to, offset, time_ms)
    committed = _committed(broker, group_id)
    rows: dict[str, dict[str, Any]] = {
        str(p): {
            "current": committed.get((topic, p)),
            "offset": target,
            "lag_after": broker.logs.get_log(topic, p).high_watermark - target,
            "error": None,
        }
        for p, target in plan.items()
    }
    result = {"group_id": group_id, "topic": topic, "to": to, "preview": preview, "partitions": rows}
    if preview:
        return result
    now = broker.clock.now_ms()
    offsets = {TopicPartition(topic, p): OffsetAndMetadata(target, "", -1, now) for p, target in plan.items()}
    done: asyncio.Future[dict[Any, Any]] = asyncio.get_running_loop().create_future()

    def answered(errors: dict[Any, Any]) -> None:
        if not done.done():
            done.set_result(errors)

    broker.coordinator.commit_offsets(OffsetCommitRequest(group_id, "", None, -1, offsets), answered)
    for tp, err in (await asyncio.wait_for(done, 10)).items():
        rows[str(tp[1])]["error"] = getattr(err, "name", str(err))
    return result
