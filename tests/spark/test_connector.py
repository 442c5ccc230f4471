"""Spark's own Kafka connector (`format("kafka")`, spark-sql-kafka-0-10 for the pinned PySpark) against
kafkito: batch reads by `subscribe`, `subscribePattern` and `assign` with starting and ending offsets,
streaming reads with `maxOffsetsPerTrigger` (batch sizes as kafkito_spark's), batch and streaming
writes read back with a plain consumer."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from tests.spark.test_source import BASE_TS, consume_all, produce_numbered

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark


def positions(df: DataFrame) -> list[tuple[int, int]]:
    return sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())


def test_batch_reads_by_subscribe_pattern_and_assign_with_starting_and_ending_offsets(
    spark: SparkSession, bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(2)
    values = produce_numbered(bootstrap, topic, partitions=2, per_partition=10)

    def read(**options: str) -> DataFrame:
        reader = spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
        for name, value in options.items():
            reader = reader.option(name, value)
        return reader.load()

    everything = read(subscribe=topic)
    assert positions(everything) == sorted(values)
    rows = {(r.partition, r.offset): r for r in everything.collect()}
    sample = rows[(1, 3)]
    assert (sample.key, sample.value, sample.topic) == (b"k3", values[(1, 3)], topic)
    assert sample.timestamp.timestamp() == (BASE_TS + 3) / 1000

    pattern = read(subscribePattern=topic.replace("-", ".") + "$")
    assert positions(pattern) == sorted(values)

    ranged = read(
        assign=json.dumps({topic: [1]}),
        startingOffsets=json.dumps({topic: {"1": 4}}),
        endingOffsets=json.dumps({topic: {"1": 7}}),
    )
    assert positions(ranged) == [(1, 4), (1, 5), (1, 6)]

    latest_of_0 = read(
        subscribe=topic,
        startingOffsets=json.dumps({topic: {"0": 8, "1": -2}}),  # -2 earliest
        endingOffsets=json.dumps({topic: {"0": -1, "1": 2}}),  # -1 latest
    )
    assert positions(latest_of_0) == [(0, 8), (0, 9), (1, 0), (1, 1)]


def test_streaming_read_with_max_offsets_per_trigger_takes_the_shares_kafkito_spark_takes(
    spark: SparkSession, bootstrap: str, new_topic: Callable[..., str], tmp_path: object
) -> None:
    topic = new_topic(3)
    values = produce_numbered(bootstrap, topic, partitions=3, per_partition=20)
    sizes: dict[str, list[int]] = {}
    for fmt in ("kafka", "kafkito"):
        query = (
            spark.readStream.format(fmt)
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "25")
            .load()
            .writeStream.format("memory")
            .queryName(f"max_offsets_{fmt}")
            .option("checkpointLocation", f"{tmp_path}/{fmt}")
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        read = positions(spark.sql(f"select * from max_offsets_{fmt}"))
        assert read == sorted(values)
        sizes[fmt] = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert sizes["kafka"] == sizes["kafkito"] == [24, 24, 12]


def test_batch_and_streaming_writes_reach_the_topic(
    spark: SparkSession, bootstrap: str, new_topic: Callable[..., str], checkpoint: str
) -> None:
    source, batch_out, stream_out = new_topic(2), new_topic(3), new_topic(1)
    rows = [(f"k{i}", f"v{i}", i % 3) for i in range(30)]
    (
        spark.createDataFrame(rows, "key string, value string, partition int")
        .write.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", batch_out)
        .save()
    )
    got = consume_all(bootstrap, batch_out, 3, 30)
    assert sorted((m.partition(), m.key(), m.value()) for m in got) == sorted(
        (p, k.encode(), v.encode()) for k, v, p in rows
    )

    values = produce_numbered(bootstrap, source, partitions=2, per_partition=15)
    query = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "10")
        .load()
        .selectExpr("key", "upper(cast(value as string)) as value")
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", stream_out)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    out = consume_all(bootstrap, stream_out, 1, 30)
    assert sorted(m.value() for m in out) == sorted(v.upper() for v in values.values())
