"""What the benchmarks share about producing with confluent-kafka: a produce that waits for room."""

from __future__ import annotations

from typing import Any


def produce_waiting(producer: Any, topic: str, value: bytes, wait_s: float = 0.001, **fields: Any) -> None:
    """`producer.produce`, serving delivery callbacks for `wait_s` at a time while its local queue is
    full (BufferError), until the record is queued."""
    while True:
        try:
            producer.produce(topic, value=value, **fields)
            return
        except BufferError:
            producer.poll(wait_s)
