"""Topics as the console shows them: partitions with offsets and sizes, and the topic's configs
(through DescribeConfigs: configs.py). Internal topics (`__...`) are listed only when asked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafkito.broker.app import Broker


class NotFound(LookupError):
    """No such topic, partition or group (404)."""


def _partition(broker: Broker, topic: str, partition: int) -> dict[str, Any]:
    log = broker.logs.get_log(topic, partition)
    start, end = log.log_start_offset, log.high_watermark
    return {
        "partition": partition,
        "log_start_offset": start,
        "high_watermark": end,
        "log_end_offset": log.log_end_offset,
        "messages": max(end - start, 0),
        "size_bytes": log.size_bytes,
        "segments": len(log.segments),
    }


def topic_list(broker: Broker, internal: bool = False) -> list[dict[str, Any]]:
    rows = []
    for info in sorted(broker.logs.topics(), key=lambda t: t.name):
        if info.name.startswith("__") and not internal:
            continue
        parts = [_partition(broker, info.name, p) for p in range(info.partitions)]
        rows.append(
            {
                "name": info.name,
                "topic_id": str(info.topic_id),
                "internal": info.name.startswith("__"),
                "partitions": info.partitions,
                "messages": sum(p["messages"] for p in parts),
                "size_bytes": sum(p["size_bytes"] for p in parts),
            }
        )
    return rows


async def topic_detail(broker: Broker, name: str) -> dict[str, Any]:
    """A topic's partitions, and its configs as DescribeConfigs answers (overrides marked)."""
    from kafkito.broker.console import configs

    info = broker.logs.topic(name)
    if info is None:
        raise NotFound(f"no topic {name}")
    return {
        "name": name,
        "topic_id": str(info.topic_id),
        "internal": name.startswith("__"),
        "partitions": [_partition(broker, name, p) for p in range(info.partitions)],
        "configs": await configs.describe(broker, configs.TOPIC, name),
    }


def check_partition(broker: Broker, topic: str, partition: int) -> None:
    info = broker.logs.topic(topic)
    if info is None:
        raise NotFound(f"no topic {topic}")
    if not 0 <= partition < info.partitions:
        raise NotFound(f"topic {topic} has no partition {partition}")
