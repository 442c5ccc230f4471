"""`kafkito topics list|describe|create|delete|alter`: what kafka-topics.sh does, with log offsets."""

from __future__ import annotations

import argparse
import re
from typing import Any

from kafkito.broker.tools.connect import admin, kafka_errors
from kafkito.broker.tools.output import ToolError, emit, print_json

PARTITION_COLUMNS = ("PARTITION", "LEADER", "REPLICAS", "ISR", "LOG-START-OFFSET", "LOG-END-OFFSET")


def parse_configs(items: list[str]) -> dict[str, str]:
    configs: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ToolError(f"--config expects NAME=VALUE, got {item!r}", 2)
        configs[name.strip()] = value.strip()
    return configs


def run_list(args: argparse.Namespace) -> int:
    client = admin(args)
    with kafka_errors():
        names = sorted(t["name"] for t in client.describe_topics())
    if args.exclude_internal:
        names = [n for n in names if not n.startswith("__")]
    if args.json:
        print_json(names)
    else:
        for name in names:
            print(name)
    return 0


def _offsets(client: Any, topics: list[dict[str, Any]]) -> dict[tuple[str, int], tuple[int, int]]:
    from kafka import TopicPartition
    from kafka.admin import OffsetSpec

    tps = [TopicPartition(t["name"], p["partition_index"]) for t in topics for p in t["partitions"]]
    if not tps:
        return {}
    earliest = client.list_partition_offsets(dict.fromkeys(tps, OffsetSpec.EARLIEST))
    latest = client.list_partition_offsets(dict.fromkeys(tps, OffsetSpec.LATEST))
    return {(tp.topic, tp.partition): (earliest[tp].offset, latest[tp].offset) for tp in tps}


def _configs(client: Any, names: list[str]) -> dict[str, dict[str, str]]:
    from kafka.admin import ConfigResource, ConfigResourceType

    if not names:
        return {}
    found = client.describe_configs([ConfigResource(ConfigResourceType.TOPIC, n) for n in names])
    return {name: {k: v["value"] for k, v in entries.items()} for name, entries in found["topic"].items()}


def _describe_topics(client: Any, names: list[str]) -> list[dict[str, Any]]:
    with kafka_errors():
        topics = client.describe_topics(names or None)
        missing = [t["name"] for t in topics if t["error_code"] == 3]
        if missing:
            raise ToolError(f"no topic {', '.join(missing)}: `kafkito topics list` shows the topics")
        topics = sorted(topics, key=lambda t: t["name"])
        offsets = _offsets(client, topics)
        configs = _configs(client, [t["name"] for t in topics])
    described = []
    for t in topics:
        partitions = []
        for p in sorted(t["partitions"], key=lambda p: p["partition_index"]):
            start, end = offsets[(t["name"], p["partition_index"])]
            partitions.append(
                {
                    "partition": p["partition_index"],
                    "leader": p["leader_id"],
                    "replicas": p["replica_nodes"],
                    "isr": p["isr_nodes"],
                    "log_start_offset": start,
                    "log_end_offset": end,
                }
            )
        replication = len(t["partitions"][0]["replica_nodes"]) if t["partitions"] else 0
        described.append(
            {
                "topic": t["name"],
                "topic_id": str(t["topic_id"]),
                "partition_count": len(partitions),
                "replication_factor": replication,
                "configs": configs.get(t["name"], {}),
                "partitions": partitions,
            }
        )
    return described


def run_describe(args: argparse.Namespace) -> int:
    client = admin(args)
    described = _describe_topics(client, args.topics)
    if args.exclude_internal:
        described = [t for t in described if not t["topic"].startswith("__")]
    if args.json:
        print_json(described)
        return 0
    for i, t in enumerate(described):
        if i:
            print()
        configs = ",".join(f"{k}={v}" for k, v in sorted(t["configs"].items()))
        print(
            f"Topic: {t['topic']}\tTopicId: {t['topic_id']}\tPartitionCount: {t['partition_count']}\t"
            f"ReplicationFactor: {t['replication_factor']}\tConfigs: {configs}"
        )
        rows = [
            (
                p["partition"],
                p["leader"],
                ",".join(map(str, p["replicas"])),
                ",".join(map(str, p["isr"])),
                p["log_start_offset"],
                p["log_end_offset"],
            )
            for p in t["partitions"]
        ]
        emit(PARTITION_COLUMNS, rows, as_json=False)
    return 0


def run_create(args: argparse.Namespace) -> int:
    client = admin(args)
    spec = {
        "num_partitions": args.partitions if args.partitions is not None else -1,
        "replication_factor": args.replication_factor if args.replication_factor is not None else -1,
        "configs": parse_configs(args.config),
    }
    with kafka_errors():
        client.create_topics({args.topic: spec})
    print(f"Created topic {args.topic}.")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    client = admin(args)
    with kafka_errors():
        client.delete_topics(args.topics)
    for name in args.topics:
        print(f"Deleted topic {name}.")
    return 0


def run_alter(args: argparse.Namespace) -> int:
    from kafka.admin import ConfigResource, ConfigResourceType

    from kafkito.broker.tools.configs import alter

    if args.partitions is None and not args.config and not args.delete_config:
        raise ToolError(
            "nothing to alter: pass --partitions N, --config NAME=VALUE or --delete-config NAME", 2
        )
    client = admin(args)
    with kafka_errors():
        if args.partitions is not None:
            client.create_partitions({args.topic: args.partitions})
            print(f"Topic {args.topic} now has {args.partitions} partitions.")
        changes: dict[str, Any] = {k: ("SET", v) for k, v in parse_configs(args.config).items()}
        changes.update({name: ("DELETE", None) for name in args.delete_config})
        if changes:
            try:
                # the broker's refusal (INVALID_CONFIG for retention.ms=abc) is returned, not raised
                alter(client, ConfigResource(ConfigResourceType.TOPIC, args.topic, changes), True)
            except ValueError as exc:  # kafka-python's check: a name the topic's configs do not list
                names = ", ".join(sorted(re.findall(r"'([^']*)'", str(exc)))) or str(exc)
                raise ToolError(f"InvalidConfigurationError: unknown topic config name: {names}") from None
            print(f"Altered the configs of topic {args.topic}: {', '.join(sorted(changes))}.")
    return 0
