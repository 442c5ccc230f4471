"""Real consumer groups for the client tests: kafka-python and confluent-kafka members, polled together."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.kafka_python import subscribe
from tests.support.waiting import DEADLINE_S, wait_until

__all__ = [
    "ConfluentMember", "KafkaPythonMember", "Member", "create_topic", "group_state", "partitions_covered",
    "wait_for_members",
]  # fmt: skip


class Member:
    """One consumer in a group, polled by its own thread as an application would.

    kafka-python 3.0.12 needs this: when a slow JoinGroup (initial delay) completes between two short
    polls, the next poll starts a fresh JoinGroup, so round-robin polling makes a leader rebalance forever.
    """

    name: str

    def __init__(self, name: str) -> None:
        self.name = name
        self._assignment: frozenset[int] = frozenset()
        self._stop = threading.Event()
        self._closed = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"member-{name}", daemon=True)

    def _start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self._poll_once()
                self._assignment = frozenset(self._read_assignment())
        except BaseException as exc:  # surfaced by assignment()
            self._error = exc
        finally:
            try:
                self._close_consumer()
            finally:
                self._closed.set()

    def _poll_once(self) -> None:
        raise NotImplementedError

    def _read_assignment(self) -> set[int]:
        raise NotImplementedError

    def _close_consumer(self) -> None:
        raise NotImplementedError

    def assignment(self) -> set[int]:
        if self._error is not None:
            raise AssertionError(f"consumer {self.name} failed") from self._error
        return set(self._assignment)

    def close(self) -> None:
        """Stop polling and close the consumer (from its own thread); idempotent."""
        self._stop.set()
        if self._thread.is_alive():
            self._closed.wait(timeout=DEADLINE_S)


class KafkaPythonMember(Member):
    def __init__(self, bootstrap: str, topic: str, group: str, name: str, **config: Any) -> None:
        from kafka import KafkaConsumer

        super().__init__(name)
        settings: dict[str, Any] = dict(
            bootstrap_servers=bootstrap,
            group_id=group,
            client_id=name,
            enable_auto_commit=False,
            session_timeout_ms=6_000,
            heartbeat_interval_ms=500,
        )
        settings.update(config)
        self.consumer = KafkaConsumer(**settings)
        subscribe(self.consumer, [topic])  # around two kafka-python join bugs: see the helper
        self._start()

    def _poll_once(self) -> None:
        self.consumer.poll(timeout_ms=200)

    def _read_assignment(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def _close_consumer(self) -> None:
        self.consumer.close()


@dataclass
class Callbacks:
    """What librdkafka told a confluent-kafka consumer, in order."""

    events: list[tuple[str, frozenset[int]]] = field(default_factory=list)


class ConfluentMember(Member):
    def __init__(self, bootstrap: str, topic: str, group: str, name: str, **config: Any) -> None:
        from confluent_kafka import Consumer

        super().__init__(name)
        self.callbacks = Callbacks()
        settings: dict[str, Any] = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": name,
            "enable.auto.commit": False,
            "session.timeout.ms": 6_000,
            "heartbeat.interval.ms": 500,
        }
        settings.update(config)
        self.consumer = Consumer(settings)
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke)
        self._start()

    def _on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        self.callbacks.events.append(("assign", frozenset(p.partition for p in partitions)))

    def _on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        self.callbacks.events.append(("revoke", frozenset(p.partition for p in partitions)))

    def _poll_once(self) -> None:
        self.consumer.poll(0.2)

    def _read_assignment(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def _close_consumer(self) -> None:
        self.consumer.close()


def wait_for_members(members: Iterable[Member], condition: Callable[[], bool], what: str) -> None:
    """Wait, while the members poll, until `condition()` holds; a member whose thread failed fails
    the wait (its `assignment()` raises), and a timeout shows every member's assignment."""
    members = list(members)

    def check() -> bool:
        for m in members:
            m.assignment()
        return condition()

    wait_until(check, DEADLINE_S, what, detail=lambda: str([(m.name, m.assignment()) for m in members]))


def partitions_covered(members: Iterable[Member], partitions: int) -> Callable[[], bool]:
    """Every partition assigned exactly once, and every member has something when there is enough."""
    members = list(members)

    def check() -> bool:
        owned = [m.assignment() for m in members]
        flat = [p for a in owned for p in a]
        if sorted(flat) != list(range(partitions)):
            return False
        return all(owned) if len(members) <= partitions else True

    return check


def group_state(broker: ThreadBroker, group: str) -> tuple[str, int, list[str]]:
    """The coordinator's view: state, generation and member ids (read on the broker's loop)."""

    def read() -> tuple[str, int, list[str]]:
        assert broker.broker is not None
        g = broker.broker.coordinator.get_group(group)
        if g is None:
            return ("Dead", -1, [])
        return (g.state.value, g.generation_id, g.member_ids())

    return broker.call(read)
