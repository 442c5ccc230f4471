"""Share groups' dead-letter queues (KIP-1191) where Kafka 4.4 cannot be compared without waiting for
something not to happen (it writes from a background thread): which archivals a share partition
reports (REJECT and the delivery-count limit, not GAP), and the DLQ topics Kafka refuses to write to or
creates, on a real on-disk log. The records themselves are compared with Kafka's by the conformance
scenario `share_dead_letter_queue`."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from kafkito.broker.log.manager import LogManager
from kafkito.broker.offsets.batches import batch_records, build_batch, iter_batches
from kafkito.broker.services import Fetches, Topics
from kafkito.broker.share.dead_letters import DeadLetters, DeadLetterSettings
from kafkito.broker.share.partition import DELIVERY_COUNT_EXCEEDED, REJECTED, ShareLimits, SharePartition
from kafkito.broker.share.states import AcquiredRange
from kafkito.purgatory import ManualClock, Purgatory, Timer

ACCEPT, RELEASE, REJECT, GAP = 1, 2, 3, 0
GROUP_ENABLE = "errors.deadletterqueue.group.enable"


def _partition(**limits: int) -> tuple[SharePartition, ManualClock, list[tuple[list[tuple[int, int]], str]]]:
    clock = ManualClock()
    sp = SharePartition(("g", uuid.uuid4(), 0), 0, Timer(clock), ShareLimits(**limits))
    told: list[tuple[list[tuple[int, int]], str]] = []
    sp.on_archive = lambda records, why: told.append((records, why))
    return sp, clock, told


def test_rejected_records_are_reported_with_their_delivery_counts_and_gaps_are_not() -> None:
    sp, _, told = _partition()
    sp.acquire("m", range(4))
    assert sp.acknowledge("m", [(0, 3, [REJECT, ACCEPT, GAP, REJECT])]) == 0
    assert told == [([(0, 1), (3, 1)], REJECTED)]


def test_a_record_released_at_the_delivery_count_limit_is_reported_once() -> None:
    sp, _, told = _partition(delivery_count_limit=2)
    for delivery in (1, 2):
        assert sp.acquire("m", [0]) == [AcquiredRange(0, 0, delivery)]
        sp.acknowledge("m", [(0, 0, [RELEASE])])
    assert told == [([(0, 2)], DELIVERY_COUNT_EXCEEDED)]
    assert sp.acquire("m", [0]) == []  # archived


def test_lock_expiry_and_a_closed_session_at_the_limit_are_reported() -> None:
    sp, clock, told = _partition(delivery_count_limit=1, record_lock_duration_ms=1000)
    sp.acquire("m", [0])
    clock.advance(1000)
    assert told == [([(0, 1)], DELIVERY_COUNT_EXCEEDED)]
    sp.acquire("m", [1])
    sp.release_member("m")
    assert told[-1] == ([(1, 1)], DELIVERY_COUNT_EXCEEDED)


def test_a_release_under_the_limit_is_not_reported() -> None:
    sp, clock, told = _partition(delivery_count_limit=3, record_lock_duration_ms=1000)
    sp.acquire("m", [0, 1])
    sp.acknowledge("m", [(0, 1, [RELEASE])])
    clock.advance(5000)
    assert told == []


# -- the DLQ topic -------------------------------------------------------------------------------------


class Setup:
    """A log manager with a source topic holding three records, and the DLQ writer's settings."""

    def __init__(self, tmp_path: Path) -> None:
        self.logs = LogManager(tmp_path)
        self.topics = Topics(self.logs, Fetches(Purgatory("Fetch", Timer(ManualClock()))))
        self.source = self.logs.create_topic("orders", 3, 1)
        self.logs.get_log("orders", 2).append(
            build_batch([(b"k0", b"v0"), (b"k1", b"v1"), (b"k2", b"v2")], 1)
        )
        self.dlq_topic = "dlq.orders"
        self.copy = False
        self.broker: dict[str, str] = {}
        self.share_version = 2
        settings = DeadLetterSettings(
            lambda _group: self.dlq_topic,
            lambda _group: self.copy,
            self.broker.get,
            lambda: self.share_version >= 2,
        )
        self.writer = DeadLetters(self.topics, settings, lambda: 1_700_000_000_000)

    def reject(self, offsets: list[int]) -> None:
        self.writer.write("g", self.source.topic_id, 2, [(o, 1) for o in offsets], REJECTED)

    def dead_letters(self) -> list[dict[str, Any]]:
        info = self.logs.topic(self.dlq_topic)
        if info is None:
            return []
        out = []
        for p in range(info.partitions):
            plog = self.logs.get_log(self.dlq_topic, p)
            for header, batch in iter_batches(plog.read(0, 1 << 20)):
                out += [
                    {"partition": p, "key": r.key, "value": r.value} for r in batch_records(batch, header)
                ]
        return out


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


def test_records_go_to_the_source_partition_modulo_the_dlq_partitions(setup: Setup) -> None:
    setup.logs.create_topic(setup.dlq_topic, 2, 1, {GROUP_ENABLE: "true"})
    setup.copy = True
    setup.reject([0, 2])
    assert setup.dead_letters() == [
        {"partition": 0, "key": b"k0", "value": b"v0"},
        {"partition": 0, "key": b"k2", "value": b"v2"},
    ]


@pytest.mark.parametrize(
    ("name", "configs"),
    [
        ("dlq.orders", {}),  # the topic's errors.deadletterqueue.group.enable is false
        ("dlq.orders", {GROUP_ENABLE: "false"}),
        ("orders-dlq", {GROUP_ENABLE: "true"}),  # not under the prefix "dlq."
    ],
)
def test_no_record_is_written_where_kafka_refuses_the_topic(
    setup: Setup, name: str, configs: dict[str, str]
) -> None:
    setup.dlq_topic = name
    setup.logs.create_topic(name, 1, 1, configs)
    setup.reject([0])
    assert setup.dead_letters() == []


def test_the_prefix_is_the_brokers(setup: Setup) -> None:
    setup.dlq_topic = "orders-dlq"
    setup.broker["errors.deadletterqueue.topic.name.prefix"] = "orders-"
    setup.logs.create_topic("orders-dlq", 1, 1, {GROUP_ENABLE: "true"})
    setup.reject([1])
    assert setup.dead_letters() == [{"partition": 0, "key": None, "value": None}]


def test_a_missing_topic_is_created_only_when_the_broker_allows_it(setup: Setup) -> None:
    setup.reject([0])
    assert setup.logs.topic(setup.dlq_topic) is None
    setup.broker["errors.deadletterqueue.auto.create.topics.enable"] = "true"
    setup.reject([0])
    created = setup.logs.topic(setup.dlq_topic)
    assert created is not None and created.configs[GROUP_ENABLE] == "true"
    assert created.configs["message.timestamp.type"] == "CreateTime"
    assert len(setup.dead_letters()) == 1


def test_nothing_is_written_below_share_version_2_or_without_a_topic_name(setup: Setup) -> None:
    setup.logs.create_topic(setup.dlq_topic, 1, 1, {GROUP_ENABLE: "true"})
    setup.share_version = 1
    setup.reject([0])
    setup.share_version, setup.dlq_topic = 2, "  "
    setup.reject([0])
    setup.dlq_topic = "dlq.orders"
    assert setup.dead_letters() == []
