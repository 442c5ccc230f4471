"""The broker process restarted, SIGKILLed under load, or handed a torn segment: the data is all there."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafkito.broker.log.batch import HEADER_SIZE, MIN_BATCH_LENGTH, batch_crc, parse_header
from tests.support.brokers import ProcessBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

from .clients import (
    DEADLINE_S,
    Rec,
    consume_confluent,
    consume_kafka_python,
    counts,
    layout,
    produce_confluent,
    produce_kafka_python,
    sample_records,
)

StartBroker = Callable[..., ProcessBroker]


def scan_segments(partition_dir: Path) -> list[tuple[int, int]]:
    """(base offset, record count) of every batch in a partition's segment files, asserting each is whole
    and passes its CRC: what a broker that repaired its logs must leave on disk."""
    out: list[tuple[int, int]] = []
    for seg in sorted(partition_dir.glob("*.log")):
        data = seg.read_bytes()
        pos = 0
        while pos < len(data):
            assert len(data) - pos >= HEADER_SIZE, f"{seg.name}: torn header at {pos}"
            h = parse_header(data, pos)
            assert h.batch_length >= MIN_BATCH_LENGTH and h.magic == 2, f"{seg.name}: bad batch at {pos}"
            assert pos + h.size <= len(data), f"{seg.name}: torn batch at {pos}"
            assert batch_crc(data, pos, h.size) == h.crc, f"{seg.name}: CRC mismatch at {pos}"
            out.append((h.base_offset, h.record_count))
            pos += h.size
    return out


def list_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, tuple[int, int]]:
    """(log start offset, high watermark) per partition, by ListOffsets v8."""
    out: dict[int, tuple[int, int]] = {}
    with WireClient(bootstrap) as wire:
        for timestamp, slot in ((-2, 0), (-1, 1)):
            response = wire.request(
                2,
                8,
                replica_id=-1,
                isolation_level=0,
                topics=[
                    dict(
                        name=topic,
                        partitions=[
                            dict(partition_index=p, current_leader_epoch=-1, timestamp=timestamp)
                            for p in range(partitions)
                        ],
                    )
                ],
            )
            for p in response.topics[0].partitions:
                assert p.error_code == 0
                pair = list(out.get(p.partition_index, (-1, -1)))
                pair[slot] = p.offset
                out[p.partition_index] = (pair[0], pair[1])
    return out


def broker_events(p: ProcessBroker) -> list[dict[str, Any]]:
    events = []
    for line in p.log_path.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


def test_sigterm_and_restart_keeps_topics_configs_records_and_offsets(broker_process: StartBroker) -> None:
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

    p = broker_process()
    admin = AdminClient({"bootstrap.servers": p.bootstrap})
    futures = admin.create_topics(
        [NewTopic("kept", 3, 1, config={"retention.ms": "86400000", "max.message.bytes": "3000000"})]
    )
    futures["kept"].result(10)
    recs = sample_records(1000, 3)
    produce_confluent(p.bootstrap, "kept", recs)
    deleted = admin.delete_records([_tp("kept", 1, 100)])
    deleted[next(iter(deleted))].result(10)
    before = list_offsets(p.bootstrap, "kept", 3)
    assert before[1][0] == 100

    assert p.stop() == 0
    p.start()

    assert list_offsets(p.bootstrap, "kept", 3) == before
    admin = AdminClient({"bootstrap.servers": p.bootstrap})
    md = admin.list_topics(timeout=10)
    assert set(md.topics["kept"].partitions) == {0, 1, 2}
    resource = ConfigResource(ConfigResource.Type.TOPIC, "kept")
    configs = admin.describe_configs([resource])[resource].result(10)
    assert configs["retention.ms"].value == "86400000"
    assert configs["max.message.bytes"].value == "3000000"

    expected = layout(recs)
    got = consume_kafka_python(p.bootstrap, "kept", {0: len(expected[0]), 2: len(expected[2])})
    assert got == {0: expected[0], 2: expected[2]}
    # Appends continue right after what was there, and are readable with the old records.
    more = sample_records(30, 3, seed=99)
    produce_confluent(p.bootstrap, "kept", more)
    after = list_offsets(p.bootstrap, "kept", 3)
    assert {q: hw - before[q][1] for q, (_, hw) in after.items()} == counts(more)
    assert p.stop() == 0
    for q in range(3):
        batches = scan_segments(p.data_dir / f"kept-{q}")
        assert batches[0][0] == 0 and sum(n for _, n in batches) == after[q][1]


def _tp(topic: str, partition: int, offset: int) -> Any:
    from confluent_kafka import TopicPartition

    return TopicPartition(topic, partition, offset)


class AckLog:
    """Records acknowledged by the broker, from any producer thread: (partition, offset) -> value."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.acked: dict[tuple[int, int], bytes] = {}

    def add(self, partition: int, offset: int, value: bytes) -> None:
        with self._lock:
            self.acked[(partition, offset)] = value

    def per_partition(self, partitions: int) -> list[int]:
        with self._lock:
            keys = list(self.acked)
        return [sum(1 for q, _ in keys if q == p) for p in range(partitions)]


def _confluent_acks1(bootstrap: str, topic: str, acks: AckLog, stop: threading.Event) -> None:
    from confluent_kafka import Producer

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            acks.add(msg.partition(), msg.offset(), msg.value())

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": 1,
            "enable.idempotence": False,
            "linger.ms": 2,
            "message.timeout.ms": 3000,
            "retries": 0,
            "log_level": 0,
        }
    )
    i = 0
    while not stop.is_set():
        try:
            producer.produce(
                topic, value=b"ck-%08d-" % i + b"x" * (i % 300), partition=i % 2, on_delivery=on_delivery
            )
            i += 1
        except BufferError:
            producer.poll(0.01)
        producer.poll(0)
    producer.poll(0.5)  # acknowledgements read before the kill still reach their callbacks
    producer.purge()
    producer.flush(1)


def _kafka_python_acks1(bootstrap: str, topic: str, acks: AckLog, stop: threading.Event) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        acks=1,
        enable_idempotence=False,
        linger_ms=2,
        retries=0,
        request_timeout_ms=1000,
        delivery_timeout_ms=1500,  # batches caught by the kill expire, so close() can flush
        max_block_ms=3000,
    )
    i = 0
    try:
        while not stop.is_set():
            value = b"kp-%08d-" % i + b"y" * (i % 200)
            try:
                future = producer.send(topic, value=value, partition=2)
            except Exception:  # the broker is gone: stop producing
                break
            future.add_callback(lambda md, v=value: acks.add(md.partition, md.offset, v))
            i += 1
            if i % 100 == 0:
                time.sleep(0.001)  # a throttle, not a wait: yields the GIL to kafka-python's sender thread
    finally:
        producer.close(timeout=10)


def test_sigkill_under_acks1_load_loses_no_acknowledged_record(broker_process: StartBroker) -> None:
    p = broker_process()
    topic = "crash"
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": p.bootstrap})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(10)
    acks = AckLog()
    stop = threading.Event()
    producers = [
        threading.Thread(target=fn, args=(p.bootstrap, topic, acks, stop), daemon=True)
        for fn in (_confluent_acks1, _kafka_python_acks1)
    ]
    for t in producers:
        t.start()
    wait_until(
        lambda: min(acks.per_partition(3)) >= 5_000, DEADLINE_S, "5,000 acknowledged records a partition"
    )
    p.kill()  # SIGKILL while both producers still have requests in flight
    stop.set()
    for t in producers:
        t.join(DEADLINE_S)
    acked = dict(acks.acked)
    assert min(acks.per_partition(3)) >= 5_000

    p.start()
    for q in range(3):
        scan_segments(p.data_dir / f"{topic}-{q}")  # recovery left only whole, CRC-valid batches
    ends = {q: hw for q, (_, hw) in list_offsets(p.bootstrap, topic, 3).items()}
    for q in range(3):
        top = max(off for part, off in acked if part == q)
        assert ends[q] > top, f"partition {q}: acknowledged offset {top} is beyond the log end {ends[q]}"
    stored = consume_confluent(p.bootstrap, topic, ends, **{"check.crcs": True})
    for (part, offset), value in acked.items():
        assert stored[part][offset].value == value, f"acknowledged record {part}/{offset} differs"


def _produce_in_batches(bootstrap: str, topic: str, batches: int, per_batch: int) -> list[Rec]:
    recs = sample_records(batches * per_batch, 1, seed=3)
    for i in range(batches):
        produce_kafka_python(bootstrap, topic, recs[i * per_batch : (i + 1) * per_batch])
    return recs


def test_torn_and_corrupt_tails_are_repaired_on_startup(broker_process: StartBroker) -> None:
    """SIGKILL, then damage the active segments by hand: the restarted broker cuts each at its last
    valid batch, says so in its log and serves what came before. The torn batch's offsets were
    acknowledged, so the log end stays after them and appends continue from there."""
    p = broker_process()
    torn = _produce_in_batches(p.bootstrap, "torn", 5, 40)
    flipped = _produce_in_batches(p.bootstrap, "flipped", 5, 40)
    p.kill()

    torn_seg = sorted((p.data_dir / "torn-0").glob("*.log"))[-1]
    size = torn_seg.stat().st_size
    torn_at, torn_kept = _last_batch(torn_seg)
    os.truncate(torn_seg, torn_at + (size - torn_at) // 2)  # a write cut short

    flipped_seg = sorted((p.data_dir / "flipped-0").glob("*.log"))[-1]
    data = bytearray(flipped_seg.read_bytes())
    flipped_at, flipped_kept = _last_batch(flipped_seg)
    data[flipped_at + HEADER_SIZE + 5] ^= 0x40  # a flipped bit inside the last batch's records
    flipped_seg.write_bytes(bytes(data) + b"\x00" * 100)  # and zeroes after it, as a crash can leave

    p.start()
    for topic, seg, at, kept in (
        ("torn", torn_seg, torn_at, torn_kept),
        ("flipped", flipped_seg, flipped_at, flipped_kept),
    ):
        assert 0 < kept < 200
        assert seg.stat().st_size == at, f"{topic}: segment cut at its last valid batch"
        assert list_offsets(p.bootstrap, topic, 1) == {0: (0, 200)}
    events = broker_events(p)
    cut = {e.get("topic") for e in events if e.get("event") == "log.truncated_invalid_tail"}
    assert cut == {"torn", "flipped"}

    assert consume_kafka_python(p.bootstrap, "torn", {0: torn_kept}) == {0: torn[:torn_kept]}
    assert consume_kafka_python(p.bootstrap, "flipped", {0: flipped_kept}) == {0: flipped[:flipped_kept]}
    again = sample_records(10, 1, seed=11)
    produce_kafka_python(p.bootstrap, "torn", again)
    assert list_offsets(p.bootstrap, "torn", 1) == {0: (0, 210)}
    p.stop()
    stored = scan_segments(p.data_dir / "torn-0")
    assert sum(n for _, n in stored) == torn_kept + 10
    assert min(base for base, _ in stored if base >= torn_kept) == 200  # the new records, after the gap


def _last_batch(segment: Path) -> tuple[int, int]:
    """File position and base offset of the segment's last batch."""
    data = segment.read_bytes()
    pos = last = 0
    while pos < len(data):
        last = pos
        pos += parse_header(data, pos).size
    return last, parse_header(data, last).base_offset
