"""librdkafka's KIP-848 consumer re-subscribing between topic names and regexes (its test
0045-subscribe_update, do_test_resubscribe_with_regex), as against Kafka 4.4: a regex new to the group
is resolved after the heartbeat that brings it, so subscribing to a regex and a topic name assigns the
named topic first and the regex's topics on a later heartbeat; leaving a regex for one topic keeps
nothing of the regex."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.waiting import wait_until

Event = tuple[str, list[tuple[str, int]]]


class Recorder:
    """A group.protocol=consumer confluent-kafka consumer that records its rebalance callbacks."""

    def __init__(self, bootstrap: str, group: str) -> None:
        from confluent_kafka import Consumer

        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer"}
        )
        self.events: list[Event] = []

    def subscribe(self, topics: list[str]) -> None:
        self.consumer.subscribe(topics, on_assign=self._on("assign"), on_revoke=self._on("revoke"))

    def _on(self, kind: str) -> Callable[[Any, list[Any]], None]:
        def record(_: Any, tps: list[Any]) -> None:
            self.events.append((kind, sorted((tp.topic, tp.partition) for tp in tps)))

        return record

    def wait_events(self, count: int) -> list[Event]:
        def enough() -> bool:
            self.consumer.poll(0.05)
            return len(self.events) >= count

        wait_until(enough, what=f"{count} rebalance callbacks, got {self.events}")
        return self.events[:count]

    def assignment(self) -> set[tuple[str, int]]:
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()}


def partitions(topic: str, count: int) -> list[tuple[str, int]]:
    return [(topic, p) for p in range(count)]


def test_regex_and_topic_name_assign_the_name_first_then_the_regex_topics(
    broker_factory: Callable[..., ThreadBroker],
) -> None:
    # Each step assigned at once, as in librdkafka's test: with Kafka's default interval (1000 ms) the
    # name and the regex's topics would come in one assignment when re-subscribing within a second.
    broker = broker_factory(group_initial_rebalance_delay_ms=0, group_consumer_assignment_interval_ms=0)
    base = f"rs{uuid.uuid4().hex[:6]}"
    regex_1, regex_2, named = f"{base}_topic_regex1", f"{base}_topic_regex2", f"{base}_topic_a"
    for topic, count in ((regex_1, 4), (regex_2, 4), (named, 2)):
        create_topic(broker.bootstrap, topic, count)
    member = Recorder(broker.bootstrap, f"{base}-group")
    try:
        member.subscribe([f"^{base}.*topic_regex.*"])
        assert member.wait_events(1) == [("assign", partitions(regex_1, 4) + partitions(regex_2, 4))]
        member.consumer.unsubscribe()
        member.wait_events(2)
        member.subscribe([f"^{base}.*topic_regex.*", named])
        first, second = member.wait_events(4)[2:]
        assert first == ("assign", partitions(named, 2))
        assert second == ("assign", partitions(regex_1, 4) + partitions(regex_2, 4))
        member.consumer.unsubscribe()
        member.wait_events(5)
        # A regex, then one topic name: nothing of the regex is left.
        member.subscribe([f"^{base}.*topic_regex.*"])
        member.wait_events(6)
        member.consumer.unsubscribe()
        member.subscribe([named])
        events = member.wait_events(8)[6:]
        assert events == [
            ("revoke", partitions(regex_1, 4) + partitions(regex_2, 4)),
            ("assign", partitions(named, 2)),
        ]
        assert member.assignment() == set(partitions(named, 2))
    finally:
        member.consumer.close()
