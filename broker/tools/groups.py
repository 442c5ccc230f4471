"""`kafkito groups list|describe|delete`: what kafka-consumer-groups.sh shows, lag per partition."""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from typing import Any

from kafkito.broker.tools.connect import admin, kafka_errors
from kafkito.broker.tools.output import ToolError, emit, print_json

OFFSET_COLUMNS = (
    "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
    "CONSUMER-ID", "HOST", "CLIENT-ID",
)  # fmt: skip
MEMBER_COLUMNS = ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
STATE_COLUMNS = ("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
INACTIVE = ("Empty", "Dead")


@dataclass(slots=True)
class PartitionRow:
    """One line of `groups describe`: where a group stands on one partition."""

    group: str
    topic: str
    partition: int
    current_offset: int | None
    log_end_offset: int | None
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None

    def cells(self) -> tuple[Any, ...]:
        return tuple(asdict(self).values())


def run_list(args: argparse.Namespace) -> int:
    client = admin(args)
    with kafka_errors():
        groups = sorted(client.list_groups(), key=lambda g: g["group_id"])
    rows = [
        (g["group_id"], g.get("group_state") or "", g.get("group_type") or "", g["protocol_type"])
        for g in groups
    ]
    if args.json or args.state:
        emit(("GROUP", "STATE", "TYPE", "PROTOCOL-TYPE"), rows, args.json)
    else:
        for row in rows:
            print(row[0])
    return 0


def describe_group(client: Any, group: str) -> dict[str, Any]:
    """The group as DescribeGroups gives it (ConsumerGroupDescribe for a KIP-848 consumer group,
    StreamsGroupDescribe for a streams group); a group the coordinator does not know is an error."""
    from kafkito.broker.tools.consumer_groups import describe_consumer_group
    from kafkito.broker.tools.streams_groups import describe_streams_group

    with kafka_errors():
        described = client.describe_groups([group])[group]
    if described.get("error") and described["group_state"] == "Dead":
        modern = describe_consumer_group(client, group) or describe_streams_group(client, group)
        if modern is not None:
            return modern
        raise NoSuchGroup(f"consumer group '{group}' does not exist: `kafkito groups list` shows the groups")
    return dict(described)


class NoSuchGroup(ToolError):
    """The coordinator does not know the group (Kafka's state Dead)."""


def _assignments(described: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    owners: dict[tuple[str, int], dict[str, Any]] = {}
    for member in described["members"]:
        assignment = member.get("member_assignment") or {}
        for entry in assignment.get("assigned_partitions", []) if isinstance(assignment, dict) else []:
            for partition in entry["partitions"]:
                owners[(entry["topic"], partition)] = member
    return owners


def committed_offsets(client: Any, group: str) -> dict[tuple[str, int], int]:
    with kafka_errors():
        found = client.list_group_offsets(group).get(group, {})
    return {(tp.topic, tp.partition): meta.offset for tp, meta in found.items() if meta.offset >= 0}


def end_offsets(client: Any, partitions: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
    from kafka import TopicPartition
    from kafka.admin import OffsetSpec

    if not partitions:
        return {}
    with kafka_errors():
        found = client.list_partition_offsets(
            {TopicPartition(t, p): OffsetSpec.LATEST for t, p in partitions}
        )
    return {(tp.topic, tp.partition): v.offset for tp, v in found.items()}


def partition_rows(client: Any, group: str, described: dict[str, Any]) -> list[PartitionRow]:
    """Every partition the group owns or has committed, with its lag: end offset - committed offset."""
    owners = _assignments(described)
    committed = committed_offsets(client, group)
    keys = set(owners) | set(committed)
    ends = end_offsets(client, keys)
    rows = []
    for topic, partition in sorted(keys):
        current = committed.get((topic, partition))
        end = ends.get((topic, partition))
        lag = end - current if current is not None and end is not None else None
        member = owners.get((topic, partition), {})
        rows.append(
            PartitionRow(
                group,
                topic,
                partition,
                current,
                end,
                lag,
                member.get("member_id"),
                member.get("client_host"),
                member.get("client_id"),
            )
        )
    return rows


def _member_rows(group: str, described: dict[str, Any]) -> list[tuple[Any, ...]]:
    owners = _assignments(described)
    return [
        (
            group,
            m["member_id"],
            m["client_host"],
            m["client_id"],
            sum(1 for owner in owners.values() if owner["member_id"] == m["member_id"]),
        )
        for m in described["members"]
    ]


def _coordinator(client: Any, group: str) -> str:
    with kafka_errors():
        # kafka-python has FindCoordinator only as a coroutine of its admin's manager
        node = client._manager.run(client._find_coordinator_id, group)
        for b in client.describe_cluster()["brokers"]:
            if b["broker_id"] == node:
                return f"{b['host']}:{b['port']} ({node})"
    return f"({node})"


def _state_row(client: Any, group: str, described: dict[str, Any]) -> tuple[Any, ...]:
    strategy = described.get("protocol_data") or ""
    return (group, _coordinator(client, group), strategy, described["group_state"], len(described["members"]))


@dataclass(slots=True)
class Described:
    """One group's table for `groups describe`, and its state."""

    state: str
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]


def _describe_one(client: Any, group: str, args: argparse.Namespace) -> Described:
    described = describe_group(client, group)
    state = described["group_state"]
    if args.state:
        return Described(state, STATE_COLUMNS, [_state_row(client, group, described)])
    if args.members:
        return Described(state, MEMBER_COLUMNS, _member_rows(group, described))
    return Described(state, OFFSET_COLUMNS, [r.cells() for r in partition_rows(client, group, described)])


def run_describe(args: argparse.Namespace) -> int:
    client = admin(args)
    groups = args.groups
    if args.all_groups:
        with kafka_errors():
            groups = sorted(g["group_id"] for g in client.list_groups())
    if not groups:
        raise ToolError("name a group (or pass --all-groups): `kafkito groups list` shows the groups", 2)
    results = {group: _describe_one(client, group, args) for group in groups}
    if args.json:
        keys = {g: _keys(d.columns) for g, d in results.items()}
        print_json({g: [dict(zip(keys[g], row, strict=True)) for row in d.rows] for g, d in results.items()})
        return 0
    for group, d in results.items():
        print()
        if d.state in INACTIVE and not args.state:
            print(f"Consumer group '{group}' has no active members.\n")
        emit(d.columns, d.rows, as_json=False)
    return 0


def _keys(columns: tuple[str, ...]) -> list[str]:
    return [c.lower().replace("-", "_").replace("#", "").replace(" (id)", "") for c in columns]


def run_delete(args: argparse.Namespace) -> int:
    """Deletes what it can; each group it cannot is a line on stderr worded as every verb's errors are
    (`kafkito groups delete: GroupIdNotFoundError: consumer group 'g' does not exist: ...`)."""
    import sys

    client = admin(args)
    with kafka_errors():
        results = client.delete_groups(args.groups)
    failed = {g: e for g, e in results.items() if e not in (None, "OK", "NoError")}
    deleted = [g for g in args.groups if g not in failed]
    if deleted:
        names = ", ".join(f"'{g}'" for g in deleted)
        print(f"Deletion of requested consumer groups ({names}) was successful.")
    for group, error in failed.items():
        print(f"kafkito groups delete: {_delete_error(group, error)}", file=sys.stderr)
    return 1 if failed else 0


def _delete_error(group: str, error: Any) -> str:
    name = getattr(error, "__name__", None) or type(error).__name__
    if isinstance(error, str):
        name = error
    hints = {
        "GroupIdNotFoundError": "does not exist: `kafkito groups list` shows the groups",
        "NonEmptyGroupError": "is not empty: stop its consumers first",
    }
    return f"{name}: consumer group '{group}' {hints.get(name, 'could not be deleted')}"
