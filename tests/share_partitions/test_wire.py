"""ShareFetch and ShareAcknowledge over the wire with exact requests: share-session epochs and their
errors, acquired ranges and delivery counts, piggy-backed acknowledgements, a lock expiring when the
broker clock is advanced, a parked fetch answered by a produce, and a restart from the real log."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest

from kafkito.protocol.errors import ErrorCode
from kafkito.testing import KafkitoHandle, start
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

FETCH, ACK = 78, 79
GROUP = "queue"


@pytest.fixture
def kafka() -> Iterator[KafkitoHandle]:
    with start() as handle:
        handle.create_topic("jobs", partitions=1)
        configs = handle.broker.coordinator.share_group_configs
        handle.call(lambda: configs.set(GROUP, "share.auto.offset.reset", "earliest"))
        yield handle


def produce(kafka: KafkitoHandle, count: int, topic: str = "jobs") -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 0})
    for i in range(count):
        producer.produce(topic, value=b"job-%d" % i)
        producer.flush()  # one batch per record: offsets line up with batches
    assert producer.flush(10) == 0


def topic_id(kafka: KafkitoHandle, name: str = "jobs") -> uuid.UUID:
    info = kafka.broker.services.topics.get(name)
    assert info is not None
    return info.topic_id


def fetch(
    wire: WireClient, member: str, epoch: int, tid: uuid.UUID | None, *, acks: list[Any] | None = None,
    version: int = 1, max_wait_ms: int = 0, max_records: int = 100, forget: bool = False,
) -> Any:  # fmt: skip
    topics = []
    if tid is not None:
        topics = [
            {"topic_id": tid, "partitions": [{"partition_index": 0, "acknowledgement_batches": acks or []}]}
        ]
    fields: dict[str, Any] = dict(
        group_id=GROUP, member_id=member, share_session_epoch=epoch, max_wait_ms=max_wait_ms, min_bytes=1,
        max_bytes=1 << 20, max_records=max_records, batch_size=100, topics=topics,
        forgotten_topics_data=[{"topic_id": tid, "partitions": [0]}] if forget else [],
    )  # fmt: skip
    if version >= 2:
        fields.update(share_acquire_mode=0, is_renew_ack=False)
    return wire.request(FETCH, version, **fields)


def acknowledge(
    wire: WireClient, member: str, epoch: int, tid: uuid.UUID, acks: list[Any], version: int = 1
) -> Any:
    fields: dict[str, Any] = dict(
        group_id=GROUP, member_id=member, share_session_epoch=epoch,
        topics=[{"topic_id": tid, "partitions": [{"partition_index": 0, "acknowledgement_batches": acks}]}],
    )  # fmt: skip
    if version >= 2:
        fields["is_renew_ack"] = False
    return wire.request(ACK, version, **fields)


def ranges(response: Any) -> list[tuple[int, int, int]]:
    return [
        (r.first_offset, r.last_offset, r.delivery_count)
        for t in response.responses
        for p in t.partitions
        for r in p.acquired_records
    ]


def batch(first: int, last: int, *types: int) -> dict[str, Any]:
    return {"first_offset": first, "last_offset": last, "acknowledge_types": list(types)}


@pytest.mark.parametrize("version", [1, 2])
def test_session_epochs_and_their_errors(kafka: KafkitoHandle, version: int) -> None:
    tid = topic_id(kafka)
    with WireClient(kafka.bootstrap_servers) as wire:
        assert fetch(wire, "m1", 1, tid, version=version).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND
        refused = fetch(wire, "m1", 0, tid, acks=[batch(0, 0, 1)], version=version)
        assert refused.error_code == ErrorCode.INVALID_REQUEST
        assert fetch(wire, "m1", 0, tid, version=version).error_code == ErrorCode.NONE
        assert fetch(wire, "m1", 5, tid, version=version).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
        assert fetch(wire, "m1", 1, tid, version=version).error_code == ErrorCode.NONE
        assert fetch(wire, "m1", 2, None, version=version).error_code == ErrorCode.NONE
        opening = acknowledge(wire, "m1", 0, tid, [], version=version)
        assert opening.error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
        assert acknowledge(wire, "m1", 3, tid, [], version=version).error_code == ErrorCode.NONE
        assert acknowledge(wire, "m1", -1, tid, [], version=version).error_code == ErrorCode.NONE
        assert (
            acknowledge(wire, "m1", -1, tid, [], version=version).error_code
            == ErrorCode.SHARE_SESSION_NOT_FOUND
        )
        unknown = fetch(wire, "m2", 0, uuid.uuid4(), version=version)
        assert [p.error_code for t in unknown.responses for p in t.partitions] == [ErrorCode.UNKNOWN_TOPIC_ID]


def test_records_are_shared_acknowledged_and_redelivered_after_the_lock_expires(kafka: KafkitoHandle) -> None:
    produce(kafka, 6)
    tid = topic_id(kafka)
    with WireClient(kafka.bootstrap_servers) as one, WireClient(kafka.bootstrap_servers) as two:
        first = fetch(one, "m1", 0, tid, max_records=4)
        assert first.acquisition_lock_timeout_ms == 30_000
        assert ranges(first) == [(0, 3, 1)]
        assert first.responses[0].partitions[0].records  # the batches carrying them
        assert ranges(fetch(two, "m2", 0, tid)) == [(4, 5, 1)]
        # m1 accepts 0, releases 1, rejects 2 on its next fetch; m2 may not acknowledge m1's 3
        after = fetch(one, "m1", 1, tid, acks=[batch(0, 2, 1, 2, 3)])
        assert after.responses[0].partitions[0].acknowledge_error_code == ErrorCode.NONE
        assert ranges(after) == [(1, 1, 2)]
        wrong = acknowledge(two, "m2", 1, tid, [batch(3, 3, 1)])
        assert wrong.responses[0].partitions[0].error_code == ErrorCode.INVALID_RECORD_STATE
        kafka.advance(30_000)  # every lock expires
        redelivered = fetch(two, "m2", 2, tid)
        assert ranges(redelivered) == [(1, 1, 3), (3, 5, 2)]


def test_a_parked_fetch_is_answered_by_a_produce(kafka: KafkitoHandle) -> None:
    tid = topic_id(kafka)
    with WireClient(kafka.bootstrap_servers) as wire:
        assert ranges(fetch(wire, "m1", 0, tid)) == []
        wire.send(
            FETCH, 1, group_id=GROUP, member_id="m1", share_session_epoch=1, max_wait_ms=30_000,
            min_bytes=1, max_bytes=1 << 20, max_records=10, batch_size=10, topics=[],
            forgotten_topics_data=[],
        )  # fmt: skip
        produce(kafka, 2)
        answer = wire.recv(FETCH, 1)
        assert ranges(answer) in ([(0, 0, 1)], [(0, 1, 1)])  # answered once the first record is there


def test_a_restart_keeps_acknowledged_records_and_redelivers_acquired_ones(kafka: KafkitoHandle) -> None:
    produce(kafka, 5)
    tid = topic_id(kafka)
    with WireClient(kafka.bootstrap_servers) as wire:
        assert ranges(fetch(wire, "m1", 0, tid)) == [(0, 4, 1)]
        acknowledge(wire, "m1", 1, tid, [batch(0, 3, 1, 3, 1, 2)])
    kafka.restart(kill=True)
    configs = kafka.broker.coordinator.share_group_configs
    kafka.call(lambda: configs.set(GROUP, "share.auto.offset.reset", "earliest"))
    with WireClient(kafka.bootstrap_servers) as wire:
        assert ranges(fetch(wire, "m2", 0, tid)) == [(3, 3, 2), (4, 4, 1)]


def test_forgetting_a_partition_or_closing_the_session_releases_what_the_member_holds(
    kafka: KafkitoHandle,
) -> None:
    produce(kafka, 4)
    tid = topic_id(kafka)
    with WireClient(kafka.bootstrap_servers) as one, WireClient(kafka.bootstrap_servers) as two:
        assert ranges(fetch(one, "m1", 0, tid, max_records=2)) == [(0, 1, 1)]
        assert ranges(fetch(two, "m2", 0, tid, max_records=2)) == [(2, 3, 1)]
        forgotten = one.request(
            FETCH, 1, group_id=GROUP, member_id="m1", share_session_epoch=1, max_wait_ms=0, min_bytes=1,
            max_bytes=1 << 20, max_records=10, batch_size=10, topics=[],
            forgotten_topics_data=[{"topic_id": tid, "partitions": [0]}],
        )  # fmt: skip
        assert forgotten.error_code == ErrorCode.NONE and ranges(forgotten) == []
        # m2 accepts 2 and closes its session with a final fetch: 3 goes back, 0-1 are available
        final = fetch(two, "m2", -1, tid, acks=[batch(2, 2, 1)])
        assert final.error_code == ErrorCode.NONE and ranges(final) == []
        assert final.responses[0].partitions[0].acknowledge_error_code == ErrorCode.NONE
        assert fetch(two, "m2", 1, tid).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND
        assert ranges(fetch(two, "m3", 0, tid)) == [(0, 1, 2), (3, 3, 2)]


def test_the_share_state_topic_is_internal(kafka: KafkitoHandle) -> None:
    produce(kafka, 1)
    with WireClient(kafka.bootstrap_servers) as wire:
        fetch(wire, "m1", 0, topic_id(kafka))  # creates __share_group_state
        listed = wire.request(3, 12, topics=None, allow_auto_topic_creation=False,
                              include_topic_authorized_operations=False)  # fmt: skip
        internal = {t.name: t.is_internal for t in listed.topics}
        assert internal["__share_group_state"] is True and internal["jobs"] is False
        deleted = wire.request(20, 6, topics=[{"name": "__share_group_state", "topic_id": uuid.UUID(int=0)}],
                               timeout_ms=5000)  # fmt: skip
        assert (
            deleted.responses[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
        )  # as for any internal one


def test_share_version_zero_turns_share_fetch_and_acknowledge_off(kafka: KafkitoHandle) -> None:
    tid = topic_id(kafka)
    with WireClient(kafka.bootstrap_servers) as wire:
        assert fetch(wire, "m1", 0, tid).error_code == ErrorCode.NONE
        update = dict(feature="share.version", max_version_level=0, upgrade_type=2)  # safe downgrade
        assert (
            wire.request(57, 1, timeout_ms=1000, feature_updates=[update], validate_only=False).error_code
            == 0
        )
        off = fetch(wire, "m1", 1, tid)
        assert (off.error_code, off.error_message) == (
            ErrorCode.UNSUPPORTED_VERSION,
            "The version of API is not supported.",
        )
        assert acknowledge(wire, "m1", 1, tid, []).error_code == ErrorCode.UNSUPPORTED_VERSION


def _fetch_waiting_for(wire: WireClient, min_bytes: int) -> None:
    wire.send(
        FETCH, 1, group_id=GROUP, member_id="m1", share_session_epoch=1, max_wait_ms=30_000,
        min_bytes=min_bytes, max_bytes=1 << 20, max_records=10, batch_size=10, topics=[],
        forgotten_topics_data=[],
    )  # fmt: skip


def _parked(kafka: KafkitoHandle) -> int:
    return int(kafka.call(lambda: kafka.broker.share.purgatory.pending))  # type: ignore[union-attr]


def test_a_fetch_short_of_min_bytes_waits_until_they_are_there(kafka: KafkitoHandle) -> None:
    """Kafka checks min_bytes before acquiring: one small record does not answer a fetch that wants
    2 KB; the big record after it does, and the fetch takes both."""
    tid = topic_id(kafka)
    with WireClient(kafka.bootstrap_servers) as wire:
        assert ranges(fetch(wire, "m1", 0, tid)) == []  # opens the session
        produce(kafka, 1)  # a batch of well under 2 KB
        _fetch_waiting_for(wire, 2_000)
        wait_until(lambda: _parked(kafka) == 1, what="the fetch parked")
        producer = confluent_kafka.Producer({"bootstrap.servers": kafka.bootstrap_servers})
        producer.produce("jobs", value=b"x" * 3_000)
        assert producer.flush(10) == 0
        assert ranges(wire.recv(FETCH, 1)) == [(0, 1, 1)]


def test_a_fetch_short_of_min_bytes_takes_what_there_is_after_its_max_wait(kafka: KafkitoHandle) -> None:
    tid = topic_id(kafka)
    with WireClient(kafka.bootstrap_servers) as wire:
        assert ranges(fetch(wire, "m1", 0, tid)) == []
        produce(kafka, 1)
        _fetch_waiting_for(wire, 1 << 20)
        wait_until(lambda: _parked(kafka) == 1, what="the fetch parked")
        kafka.advance(30_000)  # its max wait, on the broker's clock
        assert ranges(wire.recv(FETCH, 1)) == [(0, 0, 1)]
