"""Transactional producers (confluent-kafka, kafka-python) commit and abort; confluent-kafka,
kafka-python and aiokafka read the topic back with read_committed and with read_uncommitted."""

from __future__ import annotations

import pytest

from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.records import Rec
from tests.support.wire import WireClient
from tests.transactions_e2e.logview import wait_settled
from tests.transactions_e2e.producers import PRODUCERS, make_producer, txn_id
from tests.transactions_e2e.readers import CLIENTS, ISOLATIONS, append_sentinels, read, values_of

PARTITIONS = 2
CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


def batch(name: str, n: int) -> list[Rec]:
    return [
        Rec(i % PARTITIONS, f"{name}-k{i}".encode(), f"{name}-{i}".encode(), (("txn", name.encode()),))
        for i in range(n)
    ]


@pytest.mark.parametrize("producer_client", PRODUCERS)
def test_commit_and_abort_read_back_by_every_client(producer_client: str, broker: ThreadBroker) -> None:
    topic = f"commit-abort-{producer_client}"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    first, aborted, last = batch("first", 10), batch("aborted", 8), batch("last", 6)
    producer = make_producer(producer_client, broker.bootstrap, txn_id())
    try:
        producer.init()
        for recs, commit in ((first, True), (aborted, False), (last, True)):
            producer.begin()
            producer.send(topic, recs)
            if commit:
                producer.commit()
            else:
                producer.abort()
    finally:
        producer.close()

    # One control batch per partition per transaction, and nothing left open.
    ends = wait_settled(broker.bootstrap, topic, PARTITIONS)
    sent = values_of(first + aborted + last, PARTITIONS)
    assert ends == {p: len(sent[p]) + 3 for p in range(PARTITIONS)}, f"high watermarks {ends}"

    append_sentinels(broker.bootstrap, topic, PARTITIONS, "end")
    want = {
        "read_committed": values_of(first + last, PARTITIONS),
        "read_uncommitted": values_of(first + aborted + last, PARTITIONS),
    }
    wrong = []
    for client in CLIENTS:
        for isolation in ISOLATIONS:
            got = read(client, broker.bootstrap, topic, PARTITIONS, isolation, "end").values()
            if got != want[isolation]:
                wrong.append(f"{client} {isolation}: got {got}\n    want {want[isolation]}")
    assert not wrong, "readers saw the wrong records:\n  " + "\n  ".join(wrong)


@pytest.mark.parametrize("producer_client", PRODUCERS)
def test_records_keep_keys_headers_and_order_within_a_committed_transaction(
    producer_client: str, broker: ThreadBroker
) -> None:
    topic = f"commit-detail-{producer_client}"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    recs = batch("detail", 40)
    producer = make_producer(producer_client, broker.bootstrap, txn_id())
    try:
        producer.init()
        producer.begin()
        producer.send(topic, recs[:20])
        producer.send(topic, recs[20:])  # two sends, one transaction
        producer.commit()
    finally:
        producer.close()
    append_sentinels(broker.bootstrap, topic, PARTITIONS, "end")
    got = read("confluent-kafka", broker.bootstrap, topic, PARTITIONS, "read_committed", "end").by_partition
    for p in range(PARTITIONS):
        mine = [r for r in recs if r.partition == p]
        assert [(g.key, g.value, g.headers) for g in got[p]] == [(r.key, r.value, r.headers) for r in mine]
        offsets = [g.offset for g in got[p]]
        assert offsets == list(range(len(mine))), f"partition {p}: offsets {offsets}"


def compressible(name: str, n: int) -> list[Rec]:
    return [Rec(i % PARTITIONS, None, f"{name}-{i}-".encode() + b"kafkito " * 40) for i in range(n)]


def batch_codecs(bootstrap: str, topic: str) -> set[tuple[bool, str]]:
    """(is a control batch, codec) of every batch stored in the topic, by raw Fetch."""
    from kafka.record.memory_records import MemoryRecords

    out = set()
    with WireClient(bootstrap) as wire:
        for p in range(PARTITIONS):
            wanted = dict(partition=p, fetch_offset=0, partition_max_bytes=1 << 24)
            response = wire.request(
                1, 4, replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 24, isolation_level=0,
                topics=[dict(topic=topic, partitions=[wanted])],
            )  # fmt: skip
            records = MemoryRecords(bytes(response.responses[0].partitions[0].records or b""))
            while (b := records.next_batch()) is not None:
                out.add((bool(b.is_control_batch), CODEC_NAMES[b.compression_type]))
    return out


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_compressed_transactional_batches_commit_and_abort(codec: str, broker: ThreadBroker) -> None:
    """Compressed transactional batches are stored as sent; the markers are not compressed; every
    client decompresses the committed ones and skips the aborted ones."""
    topic = f"commit-abort-{codec}"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    first, aborted = compressible(f"{codec}-first", 30), compressible(f"{codec}-aborted", 30)
    producer = make_producer("confluent-kafka", broker.bootstrap, txn_id(), **{"compression.type": codec})
    try:
        producer.init()
        for recs, commit in ((first, True), (aborted, False)):
            producer.begin()
            producer.send(topic, recs)
            if commit:
                producer.commit()
            else:
                producer.abort()
    finally:
        producer.close()
    codecs = batch_codecs(broker.bootstrap, topic)
    assert codecs == {(False, codec), (True, "none")}, f"(control, codec) of the stored batches: {codecs}"
    append_sentinels(broker.bootstrap, topic, PARTITIONS, "end")
    wrong = []
    for client in CLIENTS:
        got = read(client, broker.bootstrap, topic, PARTITIONS, "read_committed", "end").values()
        if got != values_of(first, PARTITIONS):
            wrong.append(f"{client}: {got}")
    assert not wrong, "read_committed readers saw the wrong records:\n  " + "\n  ".join(wrong)
