"""Client-neutral ground truth: set up and inspect the broker with raw protocol requests.

Scenarios use these to create topics, feed records and check what the broker stored, so that a
client's cell never depends on another client being right."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from tests.support.records import Got, Rec, plain_headers
from tests.support.wire import WireClient

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@dataclass(frozen=True, slots=True)
class Stored:
    """A record as the broker stores it, with the codec of its batch."""

    got: Got
    codec: str


def create_topic(bootstrap: str, topic: str, partitions: int, **configs: str) -> None:
    with WireClient(bootstrap) as wire:
        response = wire.request(
            19, 2,
            topics=[dict(
                name=topic, num_partitions=partitions, replication_factor=1, assignments=[],
                configs=[dict(name=k.replace("_", "."), value=v) for k, v in configs.items()],
            )],
            timeout_ms=10_000, validate_only=False,
        )  # fmt: skip
    error = response.topics[0].error_code
    assert error == 0, f"CreateTopics {topic}: error {error}"


def produce(bootstrap: str, topic: str, recs: Sequence[Rec]) -> None:
    """Append `recs` (one batch per partition, acks=all); client-stamped records get `now`."""
    builders: dict[int, Any] = {}
    now = int(time.time() * 1000)
    for r in recs:
        b = builders.get(r.partition)
        if b is None:
            b = builders[r.partition] = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 30)
        ts = r.timestamp if r.timestamp is not None else now
        b.append(timestamp=ts, key=r.key, value=r.value, headers=list(r.headers))
    partition_data = []
    for p, b in sorted(builders.items()):
        b.close()
        partition_data.append(dict(index=p, records=bytes(b.buffer())))
    with WireClient(bootstrap) as wire:
        response = wire.request(
            0, 3, transactional_id=None, acks=-1, timeout_ms=10_000,
            topic_data=[dict(name=topic, partition_data=partition_data)],
        )  # fmt: skip
    for p in response.responses[0].partition_responses:
        assert p.error_code == 0, f"Produce {topic}[{p.index}]: error {p.error_code}"


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    wanted = [dict(partition_index=p, timestamp=-1) for p in range(partitions)]
    with WireClient(bootstrap) as wire:
        response = wire.request(2, 1, replica_id=-1, topics=[dict(name=topic, partitions=wanted)])
    out = {}
    for p in response.topics[0].partitions:
        assert p.error_code == 0, f"ListOffsets {topic}[{p.partition_index}]: error {p.error_code}"
        out[p.partition_index] = p.offset
    return out


def read_all(bootstrap: str, topic: str, partitions: int) -> list[Stored]:
    """Every record of the topic up to the high watermark, by Fetch v4, with its batch codec."""
    ends = end_offsets(bootstrap, topic, partitions)
    out: list[Stored] = []
    with WireClient(bootstrap) as wire:
        for p in range(partitions):
            offset = 0
            while offset < ends[p]:
                response = wire.request(
                    1, 4, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 24, isolation_level=0,
                    topics=[dict(topic=topic, partitions=[
                        dict(partition=p, fetch_offset=offset, partition_max_bytes=1 << 24)
                    ])],
                )  # fmt: skip
                part = response.responses[0].partitions[0]
                assert part.error_code == 0, f"Fetch {topic}[{p}]@{offset}: error {part.error_code}"
                records = MemoryRecords(bytes(part.records or b""))
                progressed = False
                while (batch := records.next_batch()) is not None:
                    codec = next(k for k, v in CODECS.items() if v == batch.compression_type)
                    for r in batch:
                        if r.offset < offset:
                            continue
                        got = Got(p, r.offset, r.key, r.value, plain_headers(r.headers), r.timestamp)
                        out.append(Stored(got, codec))
                        offset = r.offset + 1
                        progressed = True
                assert progressed, f"Fetch {topic}[{p}]@{offset} returned nothing below HW {ends[p]}"
    return out


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offset per partition (-1: none), by OffsetFetch v3."""
    with WireClient(bootstrap) as wire:
        response = wire.request(
            9, 3, group_id=group, topics=[dict(name=topic, partition_indexes=list(range(partitions)))]
        )
    assert response.error_code == 0, f"OffsetFetch {group}: error {response.error_code}"
    out = {}
    for p in response.topics[0].partitions:
        assert p.error_code == 0, f"OffsetFetch {group} {topic}[{p.partition_index}]: error {p.error_code}"
        out[p.partition_index] = p.committed_offset
    return out


@dataclass(frozen=True, slots=True)
class GroupState:
    state: str
    protocol_type: str
    protocol: str
    members: int


def describe_group(bootstrap: str, group: str) -> GroupState:
    with WireClient(bootstrap) as wire:
        response = wire.request(15, 0, groups=[group])
    g = response.groups[0]
    assert g.error_code == 0, f"DescribeGroups {group}: error {g.error_code}"
    return GroupState(g.group_state, g.protocol_type, g.protocol_data, len(g.members))


def cluster(bootstrap: str) -> tuple[str | None, list[tuple[int, str, int]]]:
    """(cluster id, brokers) by Metadata v2."""
    with WireClient(bootstrap) as wire:
        response = wire.request(3, 2, topics=[])
    return response.cluster_id, [(b.node_id, b.host, b.port) for b in response.brokers]


def read_log(bootstrap: str, topic: str, partitions: int, isolation: int) -> list[Got]:
    """The records a consumer at `isolation` (0 read_uncommitted, 1 read_committed) is given, by
    Fetch v4 up to the high watermark or the last stable offset: control batches are skipped, and with
    read_committed so are the batches of the aborted transactions the broker lists, as Kafka's
    consumers do."""
    ends = latest_offsets(bootstrap, topic, partitions, isolation)
    out: list[Got] = []
    with WireClient(bootstrap) as wire:
        for p in range(partitions):
            offset = 0
            while offset < ends[p]:
                response = wire.request(
                    1, 4, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 24,
                    isolation_level=isolation,
                    topics=[dict(topic=topic, partitions=[
                        dict(partition=p, fetch_offset=offset, partition_max_bytes=1 << 24)
                    ])],
                )  # fmt: skip
                part = response.responses[0].partitions[0]
                assert part.error_code == 0, f"Fetch {topic}[{p}]@{offset}: error {part.error_code}"
                aborted = sorted((a.first_offset, a.producer_id) for a in (part.aborted_transactions or []))
                start = offset
                offset = _take_batches(MemoryRecords(bytes(part.records or b"")), p, offset, aborted, out)
                assert offset > start, f"Fetch {topic}[{p}]@{start} returned nothing below {ends[p]}"
    return out


def _take_batches(
    records: Any, partition: int, offset: int, aborted: list[tuple[int, int]], out: list[Got]
) -> int:
    """Append the records of the fetched batches a consumer keeps; return the next offset to fetch."""
    live_aborts: set[int] = set()  # producer ids whose aborted transaction covers the current batch
    while (batch := records.next_batch()) is not None:
        while aborted and aborted[0][0] <= batch.last_offset:
            live_aborts.add(aborted.pop(0)[1])
        if batch.is_control_batch:
            live_aborts.discard(batch.producer_id)  # its transaction ends at this marker
        elif not (batch.is_transactional and batch.producer_id in live_aborts):
            for r in batch:
                if r.offset >= offset:
                    out.append(
                        Got(partition, r.offset, r.key, r.value, plain_headers(r.headers), r.timestamp)
                    )
        offset = max(offset, batch.next_offset)
    return offset


def latest_offsets(bootstrap: str, topic: str, partitions: int, isolation: int) -> dict[int, int]:
    """ListOffsets v2 for the latest offset: the high watermark, or with isolation 1 the LSO."""
    wanted = [dict(partition_index=p, timestamp=-1) for p in range(partitions)]
    with WireClient(bootstrap) as wire:
        response = wire.request(
            2, 2, replica_id=-1, isolation_level=isolation, topics=[dict(name=topic, partitions=wanted)]
        )
    out = {}
    for p in response.topics[0].partitions:
        assert p.error_code == 0, f"ListOffsets {topic}[{p.partition_index}]: error {p.error_code}"
        out[p.partition_index] = p.offset
    return out
