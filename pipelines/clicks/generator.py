"""Produce click events to a topic (keyed by user, so one user's clicks stay in order)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from pipelines.clicks.events import Click, generate
from pipelines.clicks.job import CLICKS_TOPIC


def ensure_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
    for future in futures.values():
        try:
            future.result(timeout=30)
        except KafkaException as exc:
            if exc.args[0].name() != "TOPIC_ALREADY_EXISTS":
                raise


def produce(bootstrap: str, topic: str, clicks: Sequence[Click]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    errors: list[str] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    for click in clicks:
        producer.produce(topic, key=click.user.encode(), value=click.to_json(), on_delivery=on_delivery)
        producer.poll(0)
    remaining = producer.flush(60)
    if errors or remaining:
        raise RuntimeError(f"{len(errors)} clicks failed ({errors[:3]}), {remaining} undelivered")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--topic", default=CLICKS_TOPIC)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    ensure_topic(args.bootstrap, args.topic, args.partitions)
    clicks = generate(args.count, start_ms=int(time.time() * 1000) - 3_600_000, seed=args.seed)
    produce(args.bootstrap, args.topic, clicks)
    print(f"produced {len(clicks)} clicks to {args.topic}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
