"""`kafkito groups reset-offsets`: kafka-consumer-groups.sh's --reset-offsets, a dry run unless --execute.

The new offsets are planned per partition (earliest, latest, an offset, a time, a shift), kept within
the partition's [log start, log end] as Kafka keeps them, printed, and committed only with --execute,
only while the group has no active members.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from kafkito.broker.tools.connect import admin, kafka_errors
from kafkito.broker.tools.groups import INACTIVE, NoSuchGroup, committed_offsets, describe_group
from kafkito.broker.tools.output import ToolError, emit

Partition = tuple[str, int]
COLUMNS = ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")


def parse_topic(spec: str) -> tuple[str, list[int] | None]:
    """`orders` (every partition) or `orders:0,2` (those partitions), as Kafka's --topic takes it."""
    topic, sep, parts = spec.partition(":")
    if not sep:
        return topic, None
    try:
        return topic, [int(p) for p in parts.split(",") if p.strip()]
    except ValueError:
        raise ToolError(f"--topic {spec!r}: expected TOPIC or TOPIC:PARTITION,PARTITION", 2) from None


def parse_datetime(text: str) -> int:
    """Epoch ms of Kafka's `YYYY-MM-DDTHH:mm:SS.sss`; a zone (`Z`, `+02:00`) is optional, local time
    without one."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ToolError(
            f"--to-datetime {text!r}: expected YYYY-MM-DDTHH:mm:SS.sss, e.g. 2026-01-31T12:00:00.000", 2
        ) from None
    return int(moment.timestamp() * 1000)


def _partitions(client: Any, args: argparse.Namespace, committed: dict[Partition, int]) -> list[Partition]:
    if args.all_topics:
        if not committed:
            raise ToolError(f"group '{args.group}' has no committed offsets: name the topics with --topic")
        return sorted(committed)
    wanted: list[Partition] = []
    for spec in args.topic:
        topic, partitions = parse_topic(spec)
        with kafka_errors():
            described = client.describe_topics([topic])[0]
        if described["error_code"]:
            raise ToolError(f"no topic {topic}: `kafkito topics list` shows the topics")
        present = [p["partition_index"] for p in described["partitions"]]
        for partition in partitions or []:
            if partition not in present:
                raise ToolError(f"topic {topic} has no partition {partition} (it has {len(present)})")
        wanted.extend((topic, p) for p in sorted(partitions or present))
    return wanted


def _list_offsets(client: Any, partitions: list[Partition], spec: Any) -> dict[Partition, int]:
    from kafka import TopicPartition

    with kafka_errors():
        found = client.list_partition_offsets({TopicPartition(t, p): spec for t, p in partitions})
    return {(tp.topic, tp.partition): v.offset for tp, v in found.items()}


def plan(
    client: Any, args: argparse.Namespace, partitions: list[Partition], committed: dict[Partition, int]
) -> dict[Partition, int]:
    """The new offset of each partition, within [log start, log end]."""
    from kafka.admin import OffsetSpec

    earliest = _list_offsets(client, partitions, OffsetSpec.EARLIEST)
    latest = _list_offsets(client, partitions, OffsetSpec.LATEST)
    if args.to_earliest:
        wanted = earliest
    elif args.to_latest:
        wanted = latest
    elif args.to_offset is not None:
        wanted = dict.fromkeys(partitions, args.to_offset)
    elif args.to_datetime is not None:
        at = _list_offsets(client, partitions, parse_datetime(args.to_datetime))
        wanted = {
            p: at[p] if at.get(p, -1) >= 0 else latest[p] for p in partitions
        }  # no record that late: the end
    else:
        wanted = {p: committed.get(p, latest[p]) + args.shift_by for p in partitions}
    return {p: min(max(wanted[p], earliest[p]), latest[p]) for p in partitions}


def run(args: argparse.Namespace) -> int:
    if not args.topic and not args.all_topics:
        raise ToolError("say which partitions: --topic TOPIC[:P,...] (repeatable) or --all-topics", 2)
    if args.to_datetime is not None:
        parse_datetime(args.to_datetime)  # refused before anything is asked of the broker
    for spec in args.topic:
        parse_topic(spec)
    client = admin(args)
    try:
        described = describe_group(client, args.group) if args.execute else None
    except NoSuchGroup:  # Dead, as Kafka's tool sees it: inactive, its offsets may be set
        described = None
    if described is not None and described["group_state"] not in INACTIVE:
        raise ToolError(
            f"assignments can only be reset if the group '{args.group}' is inactive, but the current "
            f"state is {described['group_state']}: stop its consumers first"
        )
    committed = committed_offsets(client, args.group)
    partitions = _partitions(client, args, committed)
    offsets = plan(client, args, partitions, committed)
    if args.execute:
        _commit(client, args.group, offsets)
    elif not args.dry_run and not args.json:
        print("(a dry run: nothing was changed; pass --execute to commit these offsets)")
    rows = [(args.group, t, p, o) for (t, p), o in sorted(offsets.items())]
    emit(COLUMNS, rows, args.json)
    return 0


def _commit(client: Any, group: str, offsets: dict[Partition, int]) -> None:
    from kafka import TopicPartition
    from kafka.structs import OffsetAndMetadata

    with kafka_errors():
        result = client.alter_group_offsets(
            group, {TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()}
        )
    failed = {tp: e for tp, e in (result or {}).items() if e not in (None, "NoError", "OK") and not _is_ok(e)}
    if failed:
        details = ", ".join(f"{tp.topic}-{tp.partition}: {_name(e)}" for tp, e in failed.items())
        raise ToolError(f"the broker refused some offsets: {details}")


def _is_ok(error: Any) -> bool:
    return getattr(error, "errno", None) == 0


def _name(error: Any) -> str:
    return getattr(error, "__name__", None) or str(error)
