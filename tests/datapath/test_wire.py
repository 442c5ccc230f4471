"""Produce and Fetch answered exactly, over the wire: per-partition errors, acks=0, byte limits, topic ids."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

PRODUCE, FETCH, METADATA = 0, 1, 3
TOPIC = "wire"


def batch(n: int, value_size: int = 10, *, start: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 30)
    for i in range(n):
        builder.append(
            i,
            timestamp=1_750_000_000_000 + i,
            key=None,
            value=b"%d-" % (start + i) + b"v" * value_size,
            headers=[],
        )
    return bytes(builder.build())


def values(records: bytes) -> list[bytes]:
    out = []
    pos = 0
    while pos < len(records):
        size = int.from_bytes(records[pos + 8 : pos + 12], "big") + 12
        out += [r.value for r in DefaultRecordBatch(records[pos : pos + size])]
        pos += size
    return out


def produce(
    wire: WireClient, parts: list[tuple[str, int, bytes]], *, acks: int = -1, version: int = 9
) -> Any:
    topics: dict[str, list[dict[str, Any]]] = {}
    for name, index, records in parts:
        topics.setdefault(name, []).append(dict(index=index, records=records))
    return wire.request(
        PRODUCE, version, transactional_id=None, acks=acks, timeout_ms=5000,
        topic_data=[dict(name=n, partition_data=p) for n, p in topics.items()],
    )  # fmt: skip


def fetch(
    wire: WireClient,
    parts: list[tuple[int, int, int]],
    *,
    version: int = 11,
    max_bytes: int = 50 << 20,
    topic_id: Any = None,
    max_wait_ms: int = 0,
) -> list[Any]:
    """Fetch (partition, offset, partition_max_bytes) of TOPIC; returns the partition answers in order."""
    topic: dict[str, Any] = dict(
        topic=TOPIC if version < 13 else None,
        topic_id=topic_id,
        partitions=[
            dict(
                partition=p,
                current_leader_epoch=-1,
                fetch_offset=o,
                log_start_offset=-1,
                partition_max_bytes=m,
            )
            for p, o, m in parts
        ],
    )
    r = wire.request(
        FETCH, version, replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=max_bytes,
        isolation_level=0, session_id=0, session_epoch=-1, topics=[topic], forgotten_topics_data=[],
        rack_id="",
    )  # fmt: skip
    assert r.error_code == 0 and r.session_id == 0
    return [p for t in r.responses for p in t.partitions]


@pytest.fixture
def wire(broker: ThreadBroker) -> Any:
    broker.call(lambda: broker.broker.logs.create_topic(TOPIC, 3, configs={"max.message.bytes": "20000"}))  # type: ignore[union-attr]
    with WireClient(broker.bootstrap) as client:
        yield client


def test_produce_answers_each_partition_on_its_own(wire: WireClient) -> None:
    good = batch(3)
    corrupt = bytearray(batch(3))
    corrupt[-1] ^= 0xFF  # the CRC no longer matches
    r = produce(
        wire,
        [
            (TOPIC, 0, good),
            (TOPIC, 1, bytes(corrupt)),
            (TOPIC, 2, batch(2, value_size=30_000)),
            (TOPIC, 7, good),
            ("no-such-topic", 0, good),
        ],
    )
    answers = {
        (t.name, p.index): (p.error_code, p.base_offset) for t in r.responses for p in t.partition_responses
    }
    assert answers == {
        (TOPIC, 0): (0, 0),
        (TOPIC, 1): (ErrorCode.CORRUPT_MESSAGE, -1),
        (TOPIC, 2): (ErrorCode.MESSAGE_TOO_LARGE, -1),
        (TOPIC, 7): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
        ("no-such-topic", 0): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
    }
    # Only the good partition was written.
    assert [
        len(p.records or b"") > 0 for p in fetch(wire, [(0, 0, 1 << 20), (1, 0, 1 << 20), (2, 0, 1 << 20)])
    ] == [
        True,
        False,
        False,
    ]


def test_acks_0_gets_no_response_but_is_appended(wire: WireClient) -> None:
    wire.send(
        PRODUCE, 9, transactional_id=None, acks=0, timeout_ms=5000,
        topic_data=[dict(name=TOPIC, partition_data=[dict(index=0, records=batch(4))])],
    )  # fmt: skip
    # The next answer on the connection belongs to the next request.
    md = wire.request(
        METADATA, 12, topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
    )
    assert any(t.name == TOPIC for t in md.topics)
    [p] = fetch(wire, [(0, 0, 1 << 20)])
    assert p.high_watermark == 4


def test_invalid_acks_and_transactional_produce_are_refused(wire: WireClient) -> None:
    r = produce(wire, [(TOPIC, 0, batch(1))], acks=2)
    assert r.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_REQUIRED_ACKS
    # A transactional batch outside any transaction of its producer is refused.
    txn_batch = DefaultRecordBatchBuilder(2, 0, True, 1000, 0, 0, 1 << 30)
    txn_batch.append(0, timestamp=None, key=None, value=b"v", headers=[])
    r = wire.request(
        PRODUCE, 9, transactional_id="tx", acks=-1, timeout_ms=5000,
        topic_data=[dict(name=TOPIC, partition_data=[dict(index=0, records=bytes(txn_batch.build()))])],
    )  # fmt: skip
    assert r.responses[0].partition_responses[0].error_code != 0
    [p] = fetch(wire, [(0, 0, 1 << 20)])
    assert p.high_watermark == 0


def test_fetch_respects_partition_and_request_byte_limits(wire: WireClient) -> None:
    for i in range(5):  # five batches of ~1 KB on partition 0, two on partition 1
        produce(
            wire, [(TOPIC, 0, batch(10, 100, start=10 * i))] + ([(TOPIC, 1, batch(10, 100))] if i < 2 else [])
        )
    one = len(batch(10, 100, start=40))  # the largest of the five

    # partition_max_bytes below one batch still returns the first whole batch (progress).
    [p] = fetch(wire, [(0, 0, 10)])
    assert values(p.records) == [b"%d-" % i + b"v" * 100 for i in range(10)]
    # Two and a half batches' worth returns two whole batches.
    [p] = fetch(wire, [(0, 0, int(one * 2.5))])
    assert len(values(p.records)) == 20
    # A fetch offset inside a batch returns the whole batch holding it (clients skip the rest).
    [p] = fetch(wire, [(0, 15, one)])
    assert values(p.records)[0] == b"10-" + b"v" * 100
    # The request's max_bytes caps the sum; the first partition with data is never cut to nothing.
    p0, p1 = fetch(wire, [(0, 0, 1 << 20), (1, 0, 1 << 20)], max_bytes=one * 3)
    assert len(values(p0.records)) == 30 and not p1.records
    p0, p1 = fetch(wire, [(0, 50, 1 << 20), (1, 0, 1 << 20)], max_bytes=10)
    assert (p0.records or b"") == b"" and len(values(p1.records)) == 10
    assert (p0.high_watermark, p1.high_watermark) == (50, 20)


def test_fetch_errors_per_partition(wire: WireClient, broker: ThreadBroker) -> None:
    produce(wire, [(TOPIC, 0, batch(10))])
    broker.call(lambda: broker.broker.logs.get_log(TOPIC, 0).delete_records(4))  # type: ignore[union-attr]
    below, above, at_end, unknown = fetch(wire, [(0, 2, 1000), (0, 11, 1000), (0, 10, 1000), (9, 0, 1000)])
    assert below.error_code == above.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert (at_end.error_code, at_end.records or b"", at_end.log_start_offset) == (0, b"", 4)
    assert unknown.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_fetch_by_topic_id_from_v13(wire: WireClient, broker: ThreadBroker) -> None:
    import uuid

    produce(wire, [(TOPIC, 2, batch(3))])
    topic_id = broker.call(lambda: broker.broker.logs.topic(TOPIC).topic_id)  # type: ignore[union-attr]
    for version in (13, 15, 17):
        [p] = fetch(wire, [(2, 0, 1 << 20)], version=version, topic_id=topic_id)
        assert (p.error_code, len(values(p.records))) == (0, 3)
        [p] = fetch(wire, [(2, 0, 1 << 20)], version=version, topic_id=uuid.uuid4())
        assert p.error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_a_waiting_fetch_times_out_empty_at_max_wait(wire: WireClient, broker: ThreadBroker) -> None:
    [p] = fetch(wire, [(0, 0, 1 << 20)], max_wait_ms=200)
    assert (p.error_code, p.records or b"", p.high_watermark) == (0, b"", 0)
    purgatory = broker.call(lambda: broker.broker.fetch_purgatory)  # type: ignore[union-attr]
    assert (purgatory.pending, purgatory.expirations) == (0, 1)


def _send_fetch(wire: WireClient, partitions: list[int], *, min_bytes: int, max_wait_ms: int = 60_000) -> int:
    topic = dict(
        topic=TOPIC,
        partitions=[
            dict(
                partition=p,
                current_leader_epoch=-1,
                fetch_offset=0,
                log_start_offset=-1,
                partition_max_bytes=1 << 20,
            )
            for p in partitions
        ],
    )
    return wire.send(
        FETCH, 11, replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=50 << 20,
        isolation_level=0, session_id=0, session_epoch=-1, topics=[topic], forgotten_topics_data=[],
        rack_id="",
    )  # fmt: skip


def _pending(broker: ThreadBroker) -> int:
    return broker.call(lambda: broker.broker.fetch_purgatory.pending)  # type: ignore[union-attr]


def _wait_parked(broker: ThreadBroker, n: int = 1) -> None:
    wait_until(lambda: _pending(broker) == n, 5, f"{n} fetch(es) parked in the purgatory", poll=0.01)


def test_a_parked_fetch_completes_once_appends_across_partitions_reach_min_bytes(
    wire: WireClient, broker: ThreadBroker
) -> None:
    one = len(batch(10, 100))
    with WireClient(broker.bootstrap) as consumer:
        _send_fetch(consumer, [0, 1], min_bytes=one * 2 + 1)
        _wait_parked(broker)
        produce(wire, [(TOPIC, 0, batch(10, 100))])
        assert _pending(broker) == 1  # one batch is not enough
        produce(wire, [(TOPIC, 1, batch(10, 100))])
        assert _pending(broker) == 1  # two are not either: the appends add up across partitions
        produce(wire, [(TOPIC, 0, batch(10, 100, start=10))])
        answer = consumer.recv(FETCH, 11)
    p0, p1 = [p for t in answer.responses for p in t.partitions]
    assert (len(values(p0.records)), len(values(p1.records))) == (20, 10)
    purgatory = broker.call(lambda: broker.broker.fetch_purgatory)  # type: ignore[union-attr]
    assert (purgatory.pending, purgatory.completions, purgatory.expirations) == (0, 1, 0)


def test_deleting_the_topic_answers_a_parked_fetch_at_once(wire: WireClient, broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as consumer:
        _send_fetch(consumer, [2], min_bytes=1)
        _wait_parked(broker)
        deleted = wire.request(20, 6, topics=[dict(name=TOPIC, topic_id=None)], timeout_ms=5000)
        assert deleted.responses[0].error_code == 0
        answer = consumer.recv(FETCH, 11)
    [p] = [p for t in answer.responses for p in t.partitions]
    assert p.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
