"""Bootstrap, topic admin, produce with every codec, consume from earliest and from latest."""

from __future__ import annotations

import pytest

from tests.compat import reference as ref
from tests.compat.clients.base import DEADLINE_S, Driver, wait_for_consumers
from tests.compat.harness import run_for_clients
from tests.compat.matrix import Matrix
from tests.compat.naming import topic_for
from tests.compat.records import assert_same_records, now_ms, sample_records
from tests.support.brokers import ProcessBroker
from tests.support.waiting import wait_until

PARTITIONS = 3


def test_bootstrap_and_metadata(matrix: Matrix, drivers: list[Driver], compat_broker: ProcessBroker) -> None:
    bootstrap = compat_broker.bootstrap
    cluster_id, brokers = ref.cluster(bootstrap)
    assert brokers == [(1, "127.0.0.1", compat_broker.port)]

    def body(d: Driver) -> str | None:
        topic = topic_for("bootstrap", d)
        ref.create_topic(bootstrap, topic, PARTITIONS)
        view = d.metadata(bootstrap, topic)
        assert view.brokers == brokers, f"brokers {view.brokers}"
        assert view.partitions == dict.fromkeys(range(PARTITIONS), 1), f"partition leaders {view.partitions}"
        if view.cluster_id is None:
            return "the client does not expose the cluster id"
        assert view.cluster_id == cluster_id, f"cluster id {view.cluster_id!r}"
        return None

    run_for_clients(matrix, "bootstrap", drivers, body)


def test_create_and_delete_topic(matrix: Matrix, drivers: list[Driver], compat_broker: ProcessBroker) -> None:
    bootstrap = compat_broker.bootstrap

    def body(d: Driver) -> str | None:
        topic = topic_for("topic-admin", d)
        d.create_topic(bootstrap, topic, 5)
        assert topic in d.list_topics(bootstrap)
        assert len(ref.end_offsets(bootstrap, topic, 5)) == 5
        d.delete_topic(bootstrap, topic)
        wait_until(lambda: topic not in d.list_topics(bootstrap), DEADLINE_S, f"{topic} gone from listings")
        return None

    run_for_clients(matrix, "topic-admin", drivers, body)


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_produce(codec: str, matrix: Matrix, drivers: list[Driver], compat_broker: ProcessBroker) -> None:
    bootstrap = compat_broker.bootstrap

    def body(d: Driver) -> str | None:
        topic = topic_for(f"produce-{codec}", d)
        ref.create_topic(bootstrap, topic, PARTITIONS)
        recs = sample_records(60, PARTITIONS, d.style)
        before = now_ms()
        d.produce(bootstrap, topic, recs, codec)
        after = now_ms()
        stored = ref.read_all(bootstrap, topic, PARTITIONS)
        assert_same_records(recs, [s.got for s in stored], stamped_between=(before, after))
        wrong = [(s.got.partition, s.got.offset, s.codec) for s in stored if s.codec != codec]
        assert not wrong, f"records stored with another codec (partition, offset, codec): {wrong}"
        return _style_note(d)

    run_for_clients(matrix, f"produce-{codec}", drivers, body)


def test_consume_from_earliest(matrix: Matrix, drivers: list[Driver], compat_broker: ProcessBroker) -> None:
    bootstrap = compat_broker.bootstrap

    def body(d: Driver) -> str | None:
        topic = topic_for("consume-earliest", d)
        ref.create_topic(bootstrap, topic, PARTITIONS)
        recs = sample_records(90, PARTITIONS, d.style)
        ref.produce(bootstrap, topic, recs)
        reader = d.reader(bootstrap, topic, PARTITIONS, "earliest").start()
        try:
            wait_for_consumers(lambda: len(reader.feed.records) >= len(recs), "every record", [reader])
        finally:
            reader.stop()
        assert_same_records(recs, reader.feed.records)
        return None

    run_for_clients(matrix, "consume-earliest", drivers, body)


def test_consume_from_latest(matrix: Matrix, drivers: list[Driver], compat_broker: ProcessBroker) -> None:
    bootstrap = compat_broker.bootstrap

    def body(d: Driver) -> str | None:
        topic = topic_for("consume-latest", d)
        ref.create_topic(bootstrap, topic, PARTITIONS)
        ref.produce(bootstrap, topic, sample_records(30, PARTITIONS, d.style, seed=1))
        reader = d.reader(bootstrap, topic, PARTITIONS, "latest").start()
        try:
            wait_for_consumers(reader.feed.ready.is_set, "the reader positioned at the end", [reader])
            fresh = sample_records(30, PARTITIONS, d.style, seed=2)
            ref.produce(bootstrap, topic, fresh)
            wait_for_consumers(lambda: len(reader.feed.records) >= len(fresh), "the new records", [reader])
        finally:
            reader.stop()
        assert_same_records(fresh, reader.feed.records)
        return None

    run_for_clients(matrix, "consume-latest", drivers, body)


def _style_note(d: Driver) -> str | None:
    gaps = []
    if not d.style.per_record_headers:
        gaps.append("one header set per call")
    if not d.style.explicit_timestamps:
        gaps.append("timestamps stamped by the client")
    if not d.style.binary:
        gaps.append("text keys and values")
    if not d.style.interleaved_headers:
        gaps.append("headers grouped by name (one object per record)")
    return "; ".join(gaps) or None
