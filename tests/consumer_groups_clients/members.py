"""New-protocol (KIP-848, `group.protocol=consumer`) confluent-kafka members for the client tests.

A member consumes, commits the offsets of what it consumed synchronously, and only then counts those
records as consumed: a record whose commit failed (its partition was revoked meanwhile) is counted by
the member that consumes it next, so "each record once" is exact. A member runs in a thread of the
test process (`ThreadMember`), or alone in a child process (`ProcessMember`) that a test can SIGKILL;
the child prints one line per committed record. Run as a script, this module is that child.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
Got = tuple[int, int, bytes]  # partition, offset, value


def member_config(bootstrap: str, group: str, name: str, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "group.protocol": "consumer",
        "client.id": name,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        **extra,
    }


def consume_loop(
    config: dict[str, Any],
    topic: str,
    stopping: threading.Event,
    on_got: Callable[[list[Got]], None],
    on_assignment: Callable[[frozenset[int]], None],
) -> None:
    """Consume `topic` until `stopping` is set, reporting committed records and assignment changes."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer(config)
    owned: set[int] = set()

    def assigned(_: Any, tps: list[Any]) -> None:
        owned.update(tp.partition for tp in tps)
        on_assignment(frozenset(owned))

    def revoked(_: Any, tps: list[Any]) -> None:
        owned.difference_update(tp.partition for tp in tps)
        on_assignment(frozenset(owned))

    try:
        consumer.subscribe([topic], on_assign=assigned, on_revoke=revoked)
        while not stopping.is_set():
            msgs = [m for m in consumer.consume(num_messages=200, timeout=0.1) if m.error() is None]
            if not msgs:
                continue
            ends: dict[int, int] = {}
            for m in msgs:
                ends[m.partition()] = max(ends.get(m.partition(), -1), m.offset() + 1)
            try:
                results = consumer.commit(
                    offsets=[TopicPartition(topic, p, o) for p, o in ends.items()], asynchronous=False
                )
            except KafkaException:
                continue  # nothing committed: whoever owns the partitions next consumes them again
            done = {tp.partition for tp in results or () if tp.error is None}
            on_got([(m.partition(), m.offset(), m.value()) for m in msgs if m.partition() in done])
    finally:
        consumer.close()


class ThreadMember:
    """A member consuming in a thread of the test process; `stop()` leaves the group (close)."""

    def __init__(self, bootstrap: str, group: str, topic: str, name: str, **extra: Any) -> None:
        self.name = name
        self.got: list[Got] = []
        self.assignment: frozenset[int] = frozenset()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        config = member_config(bootstrap, group, name, **extra)
        self._thread = threading.Thread(
            target=consume_loop, args=(config, topic, self._stopping, self._add, self._assigned), name=name
        )

    def _add(self, got: list[Got]) -> None:
        with self._lock:
            self.got.extend(got)

    def _assigned(self, partitions: frozenset[int]) -> None:
        self.assignment = partitions

    def start(self) -> ThreadMember:
        self._thread.start()
        return self

    def records(self) -> list[Got]:
        with self._lock:
            return list(self.got)

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=60)
        assert not self._thread.is_alive(), f"{self.name} did not stop"


class ProcessMember:
    """A member alone in a child process (this module run as a script), for SIGKILL."""

    def __init__(self, bootstrap: str, group: str, topic: str, name: str) -> None:
        self.name = name
        self.got: list[Got] = []
        self.assignment: frozenset[int] = frozenset()
        self._lock = threading.Lock()
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen(
            [sys.executable, __file__, bootstrap, group, topic, name],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=str(REPO),
        )  # fmt: skip
        self._reader = threading.Thread(target=self._read, name=f"{name}-stdout", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            event = json.loads(line)
            if "assignment" in event:
                self.assignment = frozenset(event["assignment"])
            else:
                with self._lock:
                    self.got.extend((p, o, bytes.fromhex(v)) for p, o, v in event["got"])

    def records(self) -> list[Got]:
        with self._lock:
            return list(self.got)

    def kill(self) -> None:
        """SIGKILL: the member neither commits nor leaves; the coordinator evicts it after its session."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._reader.join(timeout=30)


def _child(argv: Iterable[str]) -> None:
    bootstrap, group, topic, name = argv

    def emit(event: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()

    consume_loop(
        member_config(bootstrap, group, name),
        topic,
        threading.Event(),
        lambda got: emit({"got": [(p, o, v.hex()) for p, o, v in got]}),
        lambda parts: emit({"assignment": sorted(parts)}),
    )


if __name__ == "__main__":
    _child(sys.argv[1:])
