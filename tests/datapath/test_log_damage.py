"""A segment damaged while the broker is down, under a topic a consumer group has committed on.

The restarted broker says in its log what it found and what it did (with the file's path and the
records affected), serves every record it can prove valid, keeps the log end at or above every
committed offset, and gives new records new offsets, so the group resumes without skipping any.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kafkito.broker.log.batch import HEADER_SIZE, parse_header
from tests.support.brokers import ProcessBroker
from tests.support.waiting import DEADLINE_S, wait_until

from .clients import produce_confluent, sample_records
from .test_durability import StartBroker, list_offsets

TOPIC = "damaged"
GROUP = "damage-group"
BATCHES, PER_BATCH = 10, 10
TOTAL = BATCHES * PER_BATCH


def broker_events(p: ProcessBroker) -> list[dict[str, Any]]:
    out = []
    for line in p.log_path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def batch_positions(segment: Path) -> list[tuple[int, int, int]]:
    """(file position, base offset, record count) of each batch in a segment file."""
    data = segment.read_bytes()
    out, pos = [], 0
    while pos < len(data):
        h = parse_header(data, pos)
        out.append((pos, h.base_offset, h.record_count))
        pos += h.size
    return out


def flip(segment: Path, position: int, mask: int) -> None:
    data = bytearray(segment.read_bytes())
    data[position] ^= mask
    segment.write_bytes(bytes(data))


def consume_in_group(bootstrap: str, count: int, *, commit: bool) -> list[tuple[int, bytes]]:
    """(offset, value) of the next `count` records the group reads; commits their end if asked."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, group_id=GROUP, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    got: list[tuple[int, bytes]] = []
    try:
        consumer.assign([TopicPartition(TOPIC, 0)])
        wait_until(
            lambda: (
                got.extend(
                    (m.offset, m.value) for msgs in consumer.poll(timeout_ms=300).values() for m in msgs
                )
                or len(got) >= count
            ),
            DEADLINE_S,
            f"{count} records for the group",
        )
        if commit:
            consumer.commit()
    finally:
        consumer.close()
    return got


def committed(bootstrap: str) -> int:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=GROUP, enable_auto_commit=False)
    try:
        offset = consumer.committed(TopicPartition(TOPIC, 0))
    finally:
        consumer.close()
    assert offset is not None
    return int(offset)


def read_everything(bootstrap: str, end: int) -> list[tuple[int, bytes]]:
    """(offset, value) of every stored record below `end`, gaps allowed; confluent-kafka checks CRCs."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False, "check.crcs": 1}
    )
    got: list[tuple[int, bytes]] = []
    try:
        consumer.assign([TopicPartition(TOPIC, 0, OFFSET_BEGINNING)])

        def more() -> bool:
            for m in consumer.consume(num_messages=500, timeout=0.3):
                assert m.error() is None, m.error()
                got.append((m.offset(), m.value()))
            return bool(got) and got[-1][0] >= end - 1

        wait_until(more, DEADLINE_S, f"records up to offset {end - 1}")
    finally:
        consumer.close()
    return got


def _damage(kind: str, segment: Path) -> tuple[int, int]:
    """Damage the segment as `kind` says; (first offset, count) of the batch hit."""
    batches = batch_positions(segment)
    assert len(batches) == BATCHES
    if kind == "records":  # one byte in an early batch's records: caught by the CRC
        pos, base, count = batches[2]
        flip(segment, pos + HEADER_SIZE + 5, 0x04)
    elif kind == "base_offset":  # the base offset is outside the CRC: caught by offset order
        pos, base, count = batches[3]
        flip(segment, pos + 7, 0x01)
    else:  # "torn_tail": a write of the last batch cut short
        pos, base, count = batches[-1]
        os.truncate(segment, pos + HEADER_SIZE + 10)
    return base, count


@pytest.mark.parametrize("kind", ["records", "base_offset", "torn_tail"])
def test_damage_is_reported_and_no_committed_offset_ends_above_the_log_end(
    broker_process: StartBroker, kind: str
) -> None:
    p = broker_process()
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": p.bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(10)
    recs = sample_records(TOTAL, 1, seed=8)
    produce_confluent(p.bootstrap, TOPIC, recs, flush_every=PER_BATCH)
    assert [v for _, v in consume_in_group(p.bootstrap, TOTAL, commit=True)] == [r.value for r in recs]
    assert committed(p.bootstrap) == TOTAL
    if kind == "torn_tail":
        p.kill()  # a crash: nothing was fsynced, the recovery point is 0
    else:
        assert p.stop() == 0

    segment = p.data_dir / f"{TOPIC}-0" / "00000000000000000000.log"
    lost_base, lost_count = _damage(kind, segment)
    p.start()

    events = broker_events(p)
    assert list_offsets(p.bootstrap, TOPIC, 1) == {0: (0, TOTAL)}, "the log end stays after acknowledged data"
    assert committed(p.bootstrap) <= TOTAL
    if kind == "base_offset":
        (event,) = [e for e in events if e.get("event") == "log.batch_offset_repaired"]
        assert event["repaired_base_offset"] == lost_base and event["records_lost"] == 0
        lost = range(0)
    else:
        name = "log.corrupt_data_skipped" if kind == "records" else "log.truncated_invalid_tail"
        (event,) = [e for e in events if e.get("event") == name]
        assert (event["first_lost_offset"], event["records_lost"]) == (lost_base, lost_count)
        lost = range(lost_base, lost_base + lost_count)
    assert event["path"] == str(segment) and event["topic"] == TOPIC and event["partition"] == 0
    assert event["level"] == ("warning" if kind == "torn_tail" else "error")

    stored = read_everything(p.bootstrap, TOTAL if kind != "torn_tail" else lost_base)
    assert stored == [(o, r.value) for o, r in enumerate(recs) if o not in lost]

    # New records get new offsets, and the group resumes with exactly them.
    more = sample_records(5, 1, seed=9)
    produce_confluent(p.bootstrap, TOPIC, more)
    assert list_offsets(p.bootstrap, TOPIC, 1) == {0: (0, TOTAL + 5)}
    resumed = consume_in_group(p.bootstrap, 5, commit=True)
    assert resumed == [(TOTAL + i, r.value) for i, r in enumerate(more)]
    assert committed(p.bootstrap) == TOTAL + 5
