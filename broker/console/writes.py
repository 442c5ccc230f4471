"""The console's writes that a Kafka client could make, made as one (through `admin.call`): creating a
topic (CreateTopics) and producing one record (Produce, acks=-1), so they get the broker's own
checks and errors. Only with `--http-write`; the routes check that."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kafkito.broker.console import admin
from kafkito.broker.console.topics import NotFound

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

PRODUCE_VERSION = 9  # the topic by name (v13 names it by id); flexible
PRODUCE_TIMEOUT_MS = 30_000


async def create_topic(
    broker: Broker,
    name: str,
    partitions: int = -1,
    replication_factor: int = -1,
    configs: Mapping[str, str] | None = None,
    *,
    validate_only: bool = False,
) -> dict[str, Any]:
    """CreateTopics v7 for one topic; -1 takes the broker's num.partitions / default.replication.factor."""
    response = await admin.call(
        broker, 19, 7,
        topics=[{
            "name": name, "num_partitions": partitions, "replication_factor": replication_factor,
            "assignments": [], "configs": [{"name": k, "value": str(v)} for k, v in (configs or {}).items()],
        }],
        timeout_ms=PRODUCE_TIMEOUT_MS, validate_only=validate_only,
    )  # fmt: skip
    (result,) = response.topics
    admin.check(result.error_code, result.error_message)
    return {
        "name": result.name,
        "topic_id": str(result.topic_id),
        "partitions": result.num_partitions,
        "replication_factor": result.replication_factor,
        "validate_only": validate_only,
    }


def _partition_for(key: bytes | None, partitions: int) -> int:
    """The partition a Kafka producer's default partitioner picks for a key (murmur2); without a key,
    the next of a round robin (a producer sticks to one per batch: one record is one batch here)."""
    if key is None:
        global _round_robin
        _round_robin += 1
        return _round_robin % partitions
    from kafka.partitioner.default import murmur2

    return int(murmur2(key) & 0x7FFFFFFF) % partitions


_round_robin = -1


def _bytes(value: Any, what: str) -> bytes | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string or null")
    return value.encode("utf-8")


async def produce(
    broker: Broker,
    topic: str,
    key: str | None,
    value: str | None,
    headers: Sequence[tuple[str, str | None]] = (),
    partition: int | None = None,
) -> dict[str, Any]:
    """Append one record (key, value and header values as UTF-8) and return where it went."""
    from kafka.record.memory_records import MemoryRecordsBuilder

    info = broker.logs.topic(topic)
    if info is None:
        raise NotFound(f"no topic {topic}")
    raw_key = _bytes(key, "key")
    if partition is None:
        partition = _partition_for(raw_key, info.partitions)
    elif not 0 <= partition < info.partitions:
        raise NotFound(f"topic {topic} has no partition {partition}")
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 30)
    timestamp = int(time.time() * 1000)  # CreateTime, as a producer stamps it
    builder.append(
        timestamp, raw_key, _bytes(value, "value"), [(k, _bytes(v, "header value")) for k, v in headers]
    )
    builder.close()
    records = bytes(builder.buffer())
    response = await admin.call(
        broker, 0, PRODUCE_VERSION,
        transactional_id=None, acks=-1, timeout_ms=PRODUCE_TIMEOUT_MS,
        topic_data=[{"name": topic, "partition_data": [{"index": partition, "records": records}]}],
    )  # fmt: skip
    (answer,) = response.responses[0].partition_responses
    admin.check(answer.error_code, answer.error_message)
    append_time = answer.log_append_time_ms
    return {
        "topic": topic,
        "partition": partition,
        "offset": answer.base_offset,
        "timestamp": append_time if append_time >= 0 else timestamp,
    }
