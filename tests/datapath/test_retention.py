"""Retention run by the broker's own timer: whole old segments go, the log start moves, readers follow."""

from __future__ import annotations

import time
from collections.abc import Callable

from tests.support.brokers import ThreadBroker
from tests.support.waiting import wait_until

from .clients import DEADLINE_S, Rec, produce_confluent

SEGMENT = 4096


def _read_from_beginning(broker: ThreadBroker, topic: str, end: int) -> list[tuple[int, int]]:
    """(offset, timestamp) of every record a confluent consumer reads from OFFSET_BEGINNING up to `end`."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "retention"})
    out: list[tuple[int, int]] = []
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + DEADLINE_S
        while (not out or out[-1][0] < end - 1) and time.monotonic() < deadline:
            for m in consumer.consume(num_messages=100, timeout=0.5):
                assert m.error() is None, m.error()
                out.append((m.offset(), m.timestamp()[1]))
    finally:
        consumer.close()
    return out


def _batches(n: int, *, timestamp: int) -> list[Rec]:
    return [Rec(0, b"k%d" % i, b"v" * 900, (), timestamp) for i in range(n)]


def test_retention_bytes_deletes_old_segments_on_the_broker_timer(
    broker_factory: Callable[..., ThreadBroker],
) -> None:
    broker = broker_factory(log_retention_check_interval_ms=100)
    logs = broker.broker.logs  # type: ignore[union-attr]
    broker.call(
        lambda: logs.create_topic(
            "sized", 1, configs={"segment.bytes": str(SEGMENT), "retention.bytes": "12000"}
        )
    )
    produce_confluent(
        broker.bootstrap, "sized", _batches(60, timestamp=int(time.time() * 1000)), flush_every=3
    )

    def trimmed() -> bool:
        return bool(broker.call(lambda: logs.get_log("sized", 0).size_bytes <= 12000 + SEGMENT))

    wait_until(trimmed, DEADLINE_S, "the broker's retention task to trim the log")
    start, end, segments = broker.call(
        lambda: (lambda p: (p.log_start_offset, p.log_end_offset, len(p.segments)))(logs.get_log("sized", 0))
    )
    assert end == 60 and 0 < start < end and segments >= 3
    # Only whole segments went: the log start is a segment's base offset, and readers start there.
    assert [o for o, _ in _read_from_beginning(broker, "sized", end)] == list(range(start, end))


def test_retention_ms_deletes_segments_whose_records_are_old(
    broker_factory: Callable[..., ThreadBroker],
) -> None:
    broker = broker_factory(log_retention_check_interval_ms=100)
    logs = broker.broker.logs  # type: ignore[union-attr]
    broker.call(
        lambda: logs.create_topic(
            "aged", 1, configs={"segment.bytes": str(SEGMENT), "retention.ms": "3600000"}
        )
    )
    now = int(time.time() * 1000)
    produce_confluent(broker.bootstrap, "aged", _batches(12, timestamp=now - 2 * 3_600_000), flush_every=3)
    produce_confluent(broker.bootstrap, "aged", _batches(12, timestamp=now), flush_every=3)

    wait_until(
        lambda: broker.call(lambda: logs.get_log("aged", 0).log_start_offset > 0),
        DEADLINE_S,
        "the broker's retention task to delete the aged segments",
    )
    start = broker.call(lambda: logs.get_log("aged", 0).log_start_offset)
    assert 0 < start <= 12  # the two-hour-old records' segments are gone, the fresh ones stay
    got = _read_from_beginning(broker, "aged", 24)
    assert [o for o, _ in got] == list(range(start, 24))
    assert [ts for o, ts in got if o >= 12] == [now] * 12
