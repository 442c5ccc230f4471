"""Read a pipeline's input and output topics and compare the output with the pure-Python truth."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from pipelines.clicks.events import Click, WindowCount, expected_counts
from pipelines.clicks.job import CLICKS_TOPIC, COUNTS_TOPIC


def read_topic(bootstrap: str, topic: str, timeout_s: float = 30.0) -> Iterator[bytes]:
    """Every value in `topic`, from the first offset to the high watermark at the time of the call."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "clicks-check", "enable.auto.commit": False}
    )
    try:
        metadata = consumer.list_topics(topic, timeout=timeout_s).topics[topic]
        if metadata.error is not None:
            raise KafkaException(metadata.error)
        remaining = _assign_non_empty(consumer, topic, metadata.partitions, timeout_s)
        while remaining:
            msg = consumer.poll(timeout_s)
            if msg is None:
                raise TimeoutError(f"{topic}: nothing more within {timeout_s} s; waiting on {remaining}")
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    continue
                raise KafkaException(err)
            partition, offset = msg.partition(), msg.offset()
            assert partition is not None and offset is not None
            if partition in remaining:
                value = msg.value()
                if value is not None:
                    yield value
                if offset + 1 >= remaining[partition]:
                    del remaining[partition]
    finally:
        consumer.close()


def _assign_non_empty(
    consumer: Consumer, topic: str, partitions: Iterable[int], timeout_s: float
) -> dict[int, int]:
    """Assign every partition holding records, from its start; their high watermarks, by partition."""
    remaining: dict[int, int] = {}
    starts = []
    for p in partitions:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout_s)
        if high > low:
            remaining[p] = high
            starts.append(TopicPartition(topic, p, low))
    consumer.assign(starts)
    return remaining


def compare(expected: dict[tuple[int, str], WindowCount], produced: list[WindowCount]) -> list[str]:
    """Differences between what the job wrote and the truth; a window rewritten identically is fine."""
    problems = []
    seen: dict[tuple[int, str], WindowCount] = {}
    for row in produced:
        key = (row.window_start_ms, row.page)
        if key in seen and seen[key] != row:
            problems.append(f"window {key} written twice with different counts: {seen[key]} and {row}")
        seen[key] = row
    for key in sorted(set(expected) | set(seen)):
        if key not in seen:
            problems.append(f"missing window {key}: expected {expected[key]}")
        elif key not in expected:
            problems.append(f"unexpected window {key}: {seen[key]}")
        elif seen[key] != expected[key]:
            problems.append(f"window {key}: expected {expected[key]}, got {seen[key]}")
    return problems


def check(bootstrap: str, clicks_topic: str = CLICKS_TOPIC, counts_topic: str = COUNTS_TOPIC) -> list[str]:
    clicks = [Click.from_json(v) for v in read_topic(bootstrap, clicks_topic)]
    produced = [WindowCount.from_json(v) for v in read_topic(bootstrap, counts_topic)]
    return compare(expected_counts(clicks), produced)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--clicks-topic", default=CLICKS_TOPIC)
    parser.add_argument("--counts-topic", default=COUNTS_TOPIC)
    args = parser.parse_args(argv)
    problems = check(args.bootstrap, args.clicks_topic, args.counts_topic)
    for problem in problems:
        print(problem)
    print("OK: every closed window matches" if not problems else f"FAILED: {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
