"""The Spark job: clicks -> per-page counts in event-time windows with a watermark -> results topic.

Runs with `python -m pipelines.clicks.job` on a local Spark, or unchanged with `spark-submit` on a
cluster (see the README's "Spark pipelines"). It reads and writes through Spark's own Kafka connector
(`format("kafka")`, spark-sql-kafka-0-10) by default; `connector="kafkito"` (`--connector kafkito`)
runs it unchanged on kafkito_spark, the pure-Python source and sink with the same options.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

import kafkito_spark
from kafkito_spark.packages import kafka_package

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

CLICKS_TOPIC = "clicks"
COUNTS_TOPIC = "click-counts"
CONNECTORS = ("kafka", "kafkito")
GROUP_ID = "clicks-per-page"
WINDOW = "1 minute"
WATERMARK_DELAY = "30 seconds"
CLICK_SCHEMA = "user STRING, page STRING, ts_ms LONG, dwell_ms LONG"


def windowed_counts(clicks: DataFrame) -> DataFrame:
    """Kafka records of JSON clicks -> Kafka records (key page, JSON value) of closed windows' counts."""
    from pyspark.sql import functions as F

    events = (
        clicks.select(F.from_json(F.col("value").cast("string"), CLICK_SCHEMA).alias("c"))
        .select("c.*")
        .withColumn("event_time", F.timestamp_millis("ts_ms"))
    )
    counts = (
        events.withWatermark("event_time", WATERMARK_DELAY)
        .groupBy(F.window("event_time", WINDOW), "page")
        .agg(F.count("*").alias("clicks"), F.sum("dwell_ms").alias("dwell_ms"))
    )
    return counts.select(
        F.col("page").alias("key"),
        F.to_json(
            F.struct(
                F.unix_millis(F.col("window.start")).alias("window_start_ms"),
                F.unix_millis(F.col("window.end")).alias("window_end_ms"),
                "page",
                "clicks",
                "dwell_ms",
            )
        ).alias("value"),
    )


def start(
    spark: SparkSession,
    bootstrap: str,
    checkpoint: str,
    *,
    clicks_topic: str = CLICKS_TOPIC,
    counts_topic: str = COUNTS_TOPIC,
    group_id: str = GROUP_ID,
    max_offsets_per_trigger: int | None = None,
    available_now: bool = True,
    connector: str = "kafka",
) -> StreamingQuery:
    """Start the streaming query; with `available_now` it stops once it has caught up."""
    fmt = kafkito_spark.register(spark) if connector == "kafkito" else "kafka"
    reader = (
        spark.readStream.format(fmt)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", clicks_topic)
        .option("startingOffsets", "earliest")
        .option("kafka.group.id", group_id)
    )
    if max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets_per_trigger))
    writer = (
        windowed_counts(reader.load())
        .writeStream.format(fmt)
        .outputMode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", counts_topic)
        .option("checkpointLocation", checkpoint)
        .queryName("clicks-per-page")
    )
    writer = (
        writer.trigger(availableNow=True) if available_now else writer.trigger(processingTime="5 seconds")
    )
    return writer.start()


def session(app_name: str = "clicks-per-page") -> SparkSession:
    """Under spark-submit, the submit command's Spark; otherwise a small local one (2 cores, no UI)
    with Spark's Kafka connector for this PySpark (resolved by Ivy; `make install-spark` fetched it)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # set by spark-submit, which brings its own master
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = (
            builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.driver.memory", "512m")
            .config("spark.jars.packages", kafka_package())
        )
    spark = builder.config("spark.sql.session.timeZone", "UTC").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--checkpoint", default="./spark-checkpoints/clicks-per-page")
    parser.add_argument("--max-offsets-per-trigger", type=int, default=None)
    parser.add_argument("--connector", choices=CONNECTORS, default="kafka")
    parser.add_argument(
        "--continuous", action="store_true", help="keep running (5 s trigger) instead of catching up"
    )
    args = parser.parse_args(argv)
    spark = session()
    try:
        query = start(
            spark,
            args.bootstrap,
            args.checkpoint,
            max_offsets_per_trigger=args.max_offsets_per_trigger,
            available_now=not args.continuous,
            connector=args.connector,
        )
        query.awaitTermination()
        for progress in query.recentProgress:
            print(f"batch {progress['batchId']}: {progress['numInputRows']} clicks in")
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
