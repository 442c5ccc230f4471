"""The broker's MarkerWriter: data partitions get `append_marker`, `__consumer_offsets` partitions go to
the group coordinator, and the answer (one error per partition) comes once all of them answered."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.log.errors import KafkaStorageError, UnknownTopicOrPartition
from kafkito.broker.transactions.marker_writer import BrokerMarkerWriter
from kafkito.broker.transactions.ports import MarkerRequest, TransactionResult
from kafkito.protocol.errors import ErrorCode
from tests.transactions.harness import tp


@dataclass
class FakeLog:
    markers: list[tuple[int, int, bool, int]] = field(default_factory=list)
    fail: bool = False

    def append_marker(
        self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int = 0
    ) -> int:
        if self.fail:
            raise KafkaStorageError("disk gone")
        self.markers.append((producer_id, producer_epoch, commit, coordinator_epoch))
        return len(self.markers) - 1


@dataclass
class FakeGroups:
    calls: list[tuple[int, int, int, bool]] = field(default_factory=list)
    parked: list[Callable[[ErrorCode], None]] = field(default_factory=list)

    def complete_transaction(
        self, offsets_partition: int, producer_id: int, producer_epoch: int, commit: bool,
        done: Callable[[ErrorCode], None],
    ) -> None:  # fmt: skip
        self.calls.append((offsets_partition, producer_id, producer_epoch, commit))
        self.parked.append(done)


def _writer(logs: dict[TopicPartition, FakeLog], groups: FakeGroups) -> BrokerMarkerWriter:
    def get_log(topic: str, partition: int) -> FakeLog:
        found = logs.get(TopicPartition(topic, partition))
        if found is None:
            raise UnknownTopicOrPartition("no such partition")
        return found

    return BrokerMarkerWriter(get_log, groups)


def _request(result: TransactionResult, *partitions: TopicPartition) -> MarkerRequest:
    return MarkerRequest("app", 7, 3, result, frozenset(partitions))


def test_data_partitions_get_a_marker_each_and_failures_are_reported_per_partition() -> None:
    logs = {tp("a", 0): FakeLog(), tp("a", 1): FakeLog(fail=True)}
    answers: list[Mapping[TopicPartition, ErrorCode]] = []
    request = _request(TransactionResult.ABORT, tp("a", 0), tp("a", 1), tp("gone", 0))
    _writer(logs, FakeGroups()).write_markers(request, answers.append)
    assert answers == [
        {
            tp("a", 0): ErrorCode.NONE,
            tp("a", 1): ErrorCode.KAFKA_STORAGE_ERROR,
            tp("gone", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        }
    ]
    assert logs[tp("a", 0)].markers == [(7, 3, False, 0)]


def test_offsets_partitions_go_to_the_group_coordinator_and_the_answer_waits_for_them() -> None:
    logs = {tp("a", 0): FakeLog()}
    groups = FakeGroups()
    answers: list[Mapping[TopicPartition, ErrorCode]] = []
    request = _request(
        TransactionResult.COMMIT, tp("a", 0), tp("__consumer_offsets", 4), tp("__consumer_offsets", 9)
    )
    _writer(logs, groups).write_markers(request, answers.append)
    assert sorted(groups.calls) == [(4, 7, 3, True), (9, 7, 3, True)]
    assert answers == []
    groups.parked[0](ErrorCode.NONE)
    assert answers == []
    groups.parked[1](ErrorCode.NOT_COORDINATOR)
    groups.parked[1](ErrorCode.NONE)  # a second answer changes nothing
    assert answers == [
        {
            tp("a", 0): ErrorCode.NONE,
            tp("__consumer_offsets", 4): ErrorCode.NONE,
            tp("__consumer_offsets", 9): ErrorCode.NOT_COORDINATOR,
        }
    ]
    assert logs[tp("a", 0)].markers == [(7, 3, True, 0)]
