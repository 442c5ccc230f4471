"""A share partition's start offset around a transaction marker, as Kafka 4.4 moves and persists it:
the marker is acquired with the record before it (the member acknowledges it, or its lock expires),
and a state write carries the start offset as it was before that write's change moved it, so
DescribeShareGroupOffsets (the persisted start offset) catches up only with the next write; its lag
leaves out the records past that start offset whose delivery the write counted complete."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest

from kafkito.testing import KafkitoHandle, start
from tests.share_partitions.test_fetch_limits import set_group_config, topic_id
from tests.support.wire import WireClient

TOPIC, GROUP, MEMBER = "txn", "sg", "AAAAAAAAAAAAAAAAAAAAAA"
ACCEPT, GAP = 1, 0


@pytest.fixture
def kafka() -> Iterator[KafkitoHandle]:
    with start() as handle:
        handle.create_topic(TOPIC, partitions=1)
        set_group_config(handle, GROUP, "share.auto.offset.reset", "earliest")
        producer = confluent_kafka.Producer(
            {"bootstrap.servers": handle.bootstrap_servers, "transactional.id": "one-record"}
        )
        producer.init_transactions(10)
        producer.begin_transaction()
        producer.produce(TOPIC, value=b"only", partition=0)
        producer.commit_transaction(10)  # offset 0 the record, offset 1 the commit marker
        yield handle


def join(wire: WireClient) -> None:
    answer = wire.request(
        76, 1, group_id=GROUP, member_id=MEMBER, member_epoch=0, rack_id=None, subscribed_topic_names=[TOPIC]
    )
    assert answer.error_code == 0 and answer.assignment.topic_partitions


def fetch(wire: WireClient, tid: uuid.UUID, epoch: int) -> list[tuple[int, int]]:
    answer = wire.request(
        78, 1, group_id=GROUP, member_id=MEMBER, share_session_epoch=epoch, max_wait_ms=0, min_bytes=1,
        max_bytes=1 << 20, max_records=500, batch_size=500, forgotten_topics_data=[],
        topics=[{"topic_id": tid, "partitions": [{"partition_index": 0, "acknowledgement_batches": []}]}],
    )  # fmt: skip
    return [
        (r.first_offset, r.last_offset)
        for t in answer.responses
        for p in t.partitions
        for r in p.acquired_records
    ]


def acknowledge(wire: WireClient, tid: uuid.UUID, epoch: int, acks: list[tuple[int, int]]) -> Any:
    batches = [{"first_offset": o, "last_offset": o, "acknowledge_types": [t]} for o, t in acks]
    partitions = [{"partition_index": 0, "acknowledgement_batches": batches}]
    answer = wire.request(
        79, 1, group_id=GROUP, member_id=MEMBER, share_session_epoch=epoch,
        topics=[{"topic_id": tid, "partitions": partitions}],
    )  # fmt: skip
    assert answer.error_code == 0
    return [p.error_code for t in answer.responses for p in t.partitions]


def described(wire: WireClient) -> tuple[int, int]:
    """DescribeShareGroupOffsets v1: (start offset, lag) of the one partition."""
    answer = wire.request(90, 1, groups=[{"group_id": GROUP, "topics": None}])
    (partition,) = [p for t in answer.groups[0].topics for p in t.partitions]
    return int(partition.start_offset), int(partition.lag)


def leave(wire: WireClient) -> None:
    answer = wire.request(
        76, 1, group_id=GROUP, member_id=MEMBER, member_epoch=-1, rack_id=None, subscribed_topic_names=None
    )
    assert answer.error_code == 0


def first_fetch(wire: WireClient, tid: uuid.UUID) -> None:
    join(wire)
    assert fetch(wire, tid, 0) == [(0, 1)]  # the record and the commit marker after it


def test_accepting_the_record_before_a_marker_leaves_the_described_start_offset_at_zero(
    kafka: KafkitoHandle,
) -> None:
    tid = topic_id(kafka, TOPIC)
    with WireClient(kafka.bootstrap_servers) as wire:
        first_fetch(wire, tid)
        assert acknowledge(wire, tid, 1, [(0, ACCEPT)]) == [0]
        # Written with the start offset before the acceptance moved it; the marker is still acquired.
        # The lag leaves out the accepted record (Kafka 4.4 answers 1: the marker's offset).
        assert described(wire) == (0, 1)
        leave(wire)
        kafka.advance(10_000)  # well within the marker's acquisition lock (30 s)
        assert described(wire) == (0, 1)
        sp = kafka.broker.share.partitions[(GROUP, tid, 0)]
        assert sp.start_offset == 1


def test_closing_the_session_releases_the_marker_and_the_next_write_persists_the_start(
    kafka: KafkitoHandle,
) -> None:
    tid = topic_id(kafka, TOPIC)
    with WireClient(kafka.bootstrap_servers) as wire:
        first_fetch(wire, tid)
        assert acknowledge(wire, tid, 1, [(0, ACCEPT)]) == [0]
        assert acknowledge(wire, tid, -1, []) == []  # closes the session: the marker goes back
        assert described(wire) == (1, 1)


def test_the_marker_is_acknowledged_as_a_gap_like_a_record(kafka: KafkitoHandle) -> None:
    tid = topic_id(kafka, TOPIC)
    with WireClient(kafka.bootstrap_servers) as wire:
        first_fetch(wire, tid)
        assert acknowledge(wire, tid, 1, [(0, ACCEPT), (1, GAP)]) == [0]
        assert described(wire) == (0, 0)  # both complete: no lag, though the start offset is still 0
        assert kafka.broker.share.partitions[(GROUP, tid, 0)].start_offset == 2
