"""Idempotent produce at the protocol level: a retried batch is acknowledged again but appended once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

from .clients import consume_kafka_python

PRODUCE, INIT_PRODUCER_ID, LIST_OFFSETS = 0, 22, 2
TOPIC = "idem"


def batch(producer_id: int, epoch: int, sequence: int, n: int, *, compression: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=False,
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=sequence,
        batch_size=1 << 20,
    )
    for i in range(n):
        builder.append(
            i,
            timestamp=1_700_000_000_000 + sequence + i,
            key=b"k",
            value=b"seq-%d" % (sequence + i),
            headers=[],
        )
    return bytes(builder.build())


def init_producer_id(wire: WireClient, producer_id: int = -1, epoch: int = -1) -> tuple[int, int]:
    r = wire.request(
        INIT_PRODUCER_ID, 4, transactional_id=None, transaction_timeout_ms=60000,
        producer_id=producer_id, producer_epoch=epoch,
    )  # fmt: skip
    assert r.error_code == 0
    return r.producer_id, r.producer_epoch


def produce(wire: WireClient, version: int, records: bytes, partition: int = 0) -> Any:
    """Send one batch with acks=-1 and return its partition response."""
    r = wire.request(
        PRODUCE, version, transactional_id=None, acks=-1, timeout_ms=5000,
        topic_data=[dict(name=TOPIC, partition_data=[dict(index=partition, records=records)])],
    )  # fmt: skip
    return r.responses[0].partition_responses[0]


def log_end(wire: WireClient) -> int:
    latest = dict(partition_index=0, current_leader_epoch=-1, timestamp=-1)
    r = wire.request(
        LIST_OFFSETS, 5, replica_id=-1, isolation_level=0, topics=[dict(name=TOPIC, partitions=[latest])]
    )
    return int(r.topics[0].partitions[0].offset)


@pytest.fixture
def idem_broker(broker: ThreadBroker) -> ThreadBroker:
    broker.call(lambda: broker.broker.logs.create_topic(TOPIC, 2))  # type: ignore[union-attr]
    return broker


@pytest.mark.parametrize("version", [3, 7, 9, 11])
def test_a_retried_batch_is_appended_once_with_the_same_base_offset(
    idem_broker: ThreadBroker, version: int
) -> None:
    with WireClient(idem_broker.bootstrap) as wire:
        pid, epoch = init_producer_id(wire)
        first = batch(pid, epoch, 0, 5)
        second = batch(pid, epoch, 5, 3, compression=1)
        a = produce(wire, version, first)
        b = produce(wire, version, second)
        assert (a.error_code, a.base_offset, b.error_code, b.base_offset) == (0, 0, 0, 5)

        again_b = produce(wire, version, second)  # the retry of the last batch
        again_a = produce(wire, version, first)  # and of an older one, still among the last five
        assert (again_b.error_code, again_b.base_offset) == (0, 5)
        assert (again_a.error_code, again_a.base_offset) == (0, 0)
        assert log_end(wire) == 8

        third = produce(wire, version, batch(pid, epoch, 8, 2))
        assert (third.error_code, third.base_offset) == (0, 8)
        assert log_end(wire) == 10

    records = consume_kafka_python(idem_broker.bootstrap, TOPIC, {0: 10})[0]
    assert [r.value for r in records] == [b"seq-%d" % i for i in range(10)]


def test_pipelined_duplicates_on_one_connection_get_identical_answers(idem_broker: ThreadBroker) -> None:
    with WireClient(idem_broker.bootstrap) as wire:
        pid, epoch = init_producer_id(wire)
        records = batch(pid, epoch, 0, 4)
        fields: dict[str, Any] = dict(
            transactional_id=None, acks=1, timeout_ms=5000,
            topic_data=[dict(name=TOPIC, partition_data=[dict(index=1, records=records)])],
        )  # fmt: skip
        ids = [wire.send(PRODUCE, 9, **fields) for _ in range(3)]
        answers = [wire.recv(PRODUCE, 9) for _ in ids]
        assert [a.header.correlation_id for a in answers] == ids
        parts = [a.responses[0].partition_responses[0] for a in answers]
        assert [(p.error_code, p.base_offset) for p in parts] == [(0, 0)] * 3
    got = idem_broker.call(lambda: idem_broker.broker.logs.get_log(TOPIC, 1).log_end_offset)  # type: ignore[union-attr]
    assert got == 4


@pytest.mark.parametrize("gap", [1, 7])
def test_a_sequence_gap_is_out_of_order_and_not_appended(idem_broker: ThreadBroker, gap: int) -> None:
    with WireClient(idem_broker.bootstrap) as wire:
        pid, epoch = init_producer_id(wire)
        assert produce(wire, 9, batch(pid, epoch, 0, 5)).error_code == 0
        skipped = produce(wire, 9, batch(pid, epoch, 5 + gap, 2))
        assert skipped.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
        assert skipped.base_offset == -1
        assert log_end(wire) == 5
        resumed = produce(wire, 9, batch(pid, epoch, 5, 2))  # the producer retries in order
        assert (resumed.error_code, resumed.base_offset) == (0, 5)


def test_a_bumped_epoch_fences_the_old_one(idem_broker: ThreadBroker) -> None:
    with WireClient(idem_broker.bootstrap) as wire:
        pid, epoch = init_producer_id(wire)
        assert produce(wire, 9, batch(pid, epoch, 0, 3)).error_code == 0
        same_pid, bumped = init_producer_id(wire, pid, epoch)  # KIP-360 epoch bump
        assert (same_pid, bumped) == (pid, epoch + 1)
        assert produce(wire, 9, batch(pid, bumped, 0, 2)).base_offset == 3  # sequences restart at 0
        stale = produce(wire, 9, batch(pid, epoch, 3, 1))
        assert stale.error_code == ErrorCode.INVALID_PRODUCER_EPOCH
        assert log_end(wire) == 5


def test_dedup_survives_a_broker_restart(broker_factory: Callable[..., ThreadBroker], tmp_path: Any) -> None:
    data = tmp_path / "idem-restart"
    first_broker = broker_factory(data_dir=data)
    first_broker.call(lambda: first_broker.broker.logs.create_topic(TOPIC, 1))  # type: ignore[union-attr]
    with WireClient(first_broker.bootstrap) as wire:
        pid, epoch = init_producer_id(wire)
        records = batch(pid, epoch, 0, 6)
        assert produce(wire, 9, records).base_offset == 0
    first_broker.stop()

    second_broker = broker_factory(data_dir=data)
    with WireClient(second_broker.bootstrap) as wire:
        again = produce(wire, 9, records)  # the producer's retry reaches the restarted broker
        assert (again.error_code, again.base_offset) == (0, 0)
        assert log_end(wire) == 6
        next_pid, _ = init_producer_id(wire)
        assert next_pid != pid  # producer ids are never handed out twice
