"""`make pipeline`: generate clicks, run the Spark job until it has caught up, check its output."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

from pipelines.clicks import check, generator, job
from pipelines.clicks.events import expected_counts, generate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--max-offsets-per-trigger", type=int, default=2000)
    parser.add_argument(
        "--connector",
        choices=job.CONNECTORS,
        default="kafka",
        help="Spark's Kafka connector (default) or kafkito_spark, the pure-Python one",
    )
    args = parser.parse_args(argv)

    run = time.strftime("%Y%m%d-%H%M%S")
    clicks_topic, counts_topic = f"clicks-{run}", f"click-counts-{run}"
    generator.ensure_topic(args.bootstrap, clicks_topic, partitions=3)
    generator.ensure_topic(args.bootstrap, counts_topic, partitions=1)
    clicks = generate(args.count, start_ms=int(time.time() * 1000) - 3_600_000)
    generator.produce(args.bootstrap, clicks_topic, clicks)
    print(f"produced {len(clicks)} clicks to {clicks_topic}")

    spark = job.session()
    try:
        with tempfile.TemporaryDirectory(prefix="clicks-checkpoint-") as checkpoint:
            query = job.start(
                spark,
                args.bootstrap,
                checkpoint,
                clicks_topic=clicks_topic,
                counts_topic=counts_topic,
                group_id=f"clicks-per-page-{run}",
                max_offsets_per_trigger=args.max_offsets_per_trigger,
                connector=args.connector,
            )
            query.awaitTermination()
            for progress in query.recentProgress:
                print(f"  batch {progress['batchId']}: {progress['numInputRows']} clicks in")
    finally:
        spark.stop()

    problems = check.check(args.bootstrap, clicks_topic, counts_topic)
    for problem in problems:
        print(problem)
    if problems:
        print(f"FAILED: {len(problems)} differences between {counts_topic} and the clicks")
        return 1
    windows = len(expected_counts(clicks))
    print(f"OK ({args.connector} connector): {counts_topic} holds the {windows} closed (window, page) counts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
