"""read_committed over the wire: Fetch stops at the last stable offset and names the aborted
transactions, ListOffsets LATEST is the LSO, and a parked read_committed fetch wakes when the LSO
moves, not when the high watermark does.

Transactional batches are appended through the broker's own partition log, in its loop thread (the
Produce gate for transactional ids belongs to the transaction coordinator's tests); the reads are
raw requests built with kafka-python's classes against the real broker.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from kafkito.broker.log.partition_log import PartitionLog
from tests.support.brokers import ThreadBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

FETCH, LIST_OFFSETS = 1, 2
TOPIC = "txn"
A, B = 5001, 5002
READ_UNCOMMITTED, READ_COMMITTED = 0, 1


class Log:
    """The partition log of TOPIC-0, driven on the broker's loop thread."""

    def __init__(self, broker: ThreadBroker) -> None:
        self.broker = broker
        self.seq: dict[int, int] = {}

    def _log(self) -> PartitionLog:
        return self.broker.broker.logs.get_log(TOPIC, 0)  # type: ignore[union-attr]

    def send(self, pid: int | None, *values: bytes) -> int:
        transactional = pid is not None
        seq = self.seq.get(pid, 0) if pid is not None else -1
        builder = DefaultRecordBatchBuilder(
            2, 0, transactional, pid if pid is not None else -1, 0 if transactional else -1, seq, 1 << 30
        )
        now = int(time.time() * 1000)
        for i, v in enumerate(values):
            builder.append(i, timestamp=now, key=None, value=v, headers=[])
        if pid is not None:
            self.seq[pid] = seq + len(values)
        raw = bytes(builder.build())
        return self.broker.call(lambda: self._log().append(raw).base_offset)

    def end(self, pid: int, commit: bool) -> int:
        return self.broker.call(lambda: self._log().append_marker(pid, 0, commit))

    @property
    def offsets(self) -> tuple[int, int]:
        return self.broker.call(lambda: (self._log().last_stable_offset, self._log().high_watermark))


def data_values(records: bytes | None) -> list[bytes]:
    """The values of the data records in a Fetch answer (control batches left out)."""
    out: list[bytes] = []
    pos = 0
    records = records or b""
    while pos < len(records):
        size = int.from_bytes(records[pos + 8 : pos + 12], "big") + 12
        batch = DefaultRecordBatch(records[pos : pos + size])
        if not batch.is_control_batch:
            out += [r.value for r in batch]
        pos += size
    return out


def fetch(wire: WireClient, offset: int, isolation: int, *, version: int = 11, max_wait_ms: int = 0) -> Any:
    send_fetch(wire, offset, isolation, version=version, max_wait_ms=max_wait_ms)
    return receive_fetch(wire, version)


def send_fetch(wire: WireClient, offset: int, isolation: int, *, version: int, max_wait_ms: int) -> None:
    partition = dict(
        partition=0,
        current_leader_epoch=-1,
        fetch_offset=offset,
        log_start_offset=-1,
        partition_max_bytes=1 << 20,
    )
    wire.send(
        FETCH, version, replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20,
        isolation_level=isolation, session_id=0, session_epoch=-1,
        topics=[dict(topic=TOPIC, topic_id=None, partitions=[partition])],
        forgotten_topics_data=[], rack_id="",
    )  # fmt: skip


def receive_fetch(wire: WireClient, version: int) -> Any:
    r = wire.recv(FETCH, version)
    assert r.error_code == 0
    [[p]] = [t.partitions for t in r.responses]
    assert p.error_code == 0
    return p


def aborted(p: Any) -> list[tuple[int, int]] | None:
    if p.aborted_transactions is None:
        return None
    return [(a.producer_id, a.first_offset) for a in p.aborted_transactions]


def latest(wire: WireClient, isolation: int) -> int:
    partition = dict(partition_index=0, current_leader_epoch=-1, timestamp=-1)
    r = wire.request(
        LIST_OFFSETS, 4, replica_id=-1, isolation_level=isolation,
        topics=[dict(name=TOPIC, partitions=[partition])],
    )  # fmt: skip
    [[p]] = [t.partitions for t in r.topics]
    assert p.error_code == 0
    return int(p.offset)


@pytest.fixture
def log(broker: ThreadBroker) -> Log:
    broker.call(lambda: broker.broker.logs.create_topic(TOPIC, 1))  # type: ignore[union-attr]
    return Log(broker)


@pytest.fixture
def wire(broker: ThreadBroker, log: Log) -> Iterator[WireClient]:
    with WireClient(broker.bootstrap) as client:
        yield client


@pytest.mark.parametrize("version", [4, 11, 12])
def test_read_committed_stops_at_the_lso_and_names_aborted_transactions(
    log: Log, wire: WireClient, version: int
) -> None:
    log.send(A, b"a1", b"a2")  # 0-1
    log.send(None, b"plain")  # 2
    log.send(B, b"b1")  # 3
    log.send(A, b"a3")  # 4
    assert log.end(A, True) == 5
    assert log.offsets == (3, 6)
    p = fetch(wire, 0, READ_COMMITTED, version=version)
    assert (p.high_watermark, p.last_stable_offset) == (6, 3)
    assert data_values(p.records) == [b"a1", b"a2", b"plain"]
    assert aborted(p) == []
    u = fetch(wire, 0, READ_UNCOMMITTED, version=version)
    assert (u.high_watermark, u.last_stable_offset) == (6, 3)
    assert data_values(u.records) == [b"a1", b"a2", b"plain", b"b1", b"a3"]
    assert aborted(u) is None
    assert (latest(wire, READ_COMMITTED), latest(wire, READ_UNCOMMITTED)) == (3, 6)

    assert log.end(B, False) == 6
    log.send(None, b"after")  # 7
    p = fetch(wire, 3, READ_COMMITTED, version=version)
    assert (p.high_watermark, p.last_stable_offset) == (8, 8)
    assert data_values(p.records) == [b"b1", b"a3", b"after"]  # the client drops B's, by the list
    assert aborted(p) == [(B, 3)]
    assert aborted(fetch(wire, 7, READ_COMMITTED, version=version)) == []  # past the aborted range
    assert latest(wire, READ_COMMITTED) == 8


def pending(broker: ThreadBroker) -> int:
    return broker.call(lambda: broker.broker.fetch_purgatory.pending)  # type: ignore[union-attr]


def test_a_parked_read_committed_fetch_wakes_when_the_lso_moves(
    broker: ThreadBroker, log: Log, wire: WireClient
) -> None:
    log.send(A, b"open")  # 0, holds the LSO at 0
    send_fetch(wire, 0, READ_COMMITTED, version=12, max_wait_ms=30_000)
    wait_until(lambda: pending(broker) == 1, 10, "the read_committed fetch parked")
    # Appends move the high watermark, not the LSO: each one re-checks the parked fetch (the wake runs
    # inside the append, on the loop thread), and it stays parked.
    log.send(A, b"more")
    log.send(None, b"plain")
    assert pending(broker) == 1
    log.end(A, True)  # the LSO moves past everything
    p = receive_fetch(wire, 12)
    assert p.last_stable_offset == p.high_watermark == 4
    assert data_values(p.records) == [b"open", b"more", b"plain"]
    assert pending(broker) == 0


class Reader:
    """A real read_committed consumer of TOPIC-0 from the beginning: confluent-kafka or kafka-python."""

    def __init__(self, bootstrap: str, client: str) -> None:
        self.client = client
        self.got: list[bytes] = []
        if client == "confluent":
            from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

            self.c: Any = Consumer(
                {"bootstrap.servers": bootstrap, "group.id": "rc", "isolation.level": "read_committed"}
            )
            self.c.assign([TopicPartition(TOPIC, 0, OFFSET_BEGINNING)])
        else:
            from kafka import KafkaConsumer
            from kafka import TopicPartition as KTopicPartition

            self.c = KafkaConsumer(
                bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False
            )
            self.c.assign([KTopicPartition(TOPIC, 0)])
            self.c.seek_to_beginning()

    def poll(self) -> bool:
        if self.client == "confluent":
            m = self.c.poll(0.1)
            if m is not None and m.error() is None:
                self.got.append(m.value())
        else:
            for records in self.c.poll(timeout_ms=100).values():
                self.got.extend(r.value for r in records)
        return True

    def until(self, count: int) -> list[bytes]:
        wait_until(lambda: self.poll() and len(self.got) >= count, 20, f"{count} records consumed", poll=0)
        return self.got

    def close(self) -> None:
        self.c.close()


@pytest.mark.parametrize("client", ["confluent", "kafka-python"])
def test_real_consumers_skip_aborted_and_open_transactions(
    log: Log, broker: ThreadBroker, client: str
) -> None:
    log.send(A, b"a1")
    log.send(B, b"aborted1")
    log.send(None, b"plain1")
    log.send(A, b"a2")
    log.end(B, False)
    log.end(A, True)
    log.send(B, b"aborted2")
    log.end(B, False)
    log.send(None, b"plain2")
    log.send(A, b"open")  # held back until its transaction ends, then aborted
    log.send(None, b"held back")
    want = [b"a1", b"plain1", b"a2", b"plain2"]
    reader = Reader(broker.bootstrap, client)
    try:
        assert reader.until(len(want)) == want
        log.end(A, False)
        # Had anything past the LSO been served before, it would sit before "held back" here.
        assert reader.until(len(want) + 1) == [*want, b"held back"]
    finally:
        reader.close()
