"""The `kafkito` PySpark data source against a real kafkito broker: read and write, batch and streaming."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

BASE_TS = 1_700_000_000_000


def produce_numbered(
    bootstrap: str, topic: str, partitions: int, per_partition: int
) -> dict[tuple[int, int], bytes]:
    """`per_partition` records in each partition; returns value by (partition, offset)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2})
    values = {}
    for p in range(partitions):
        for i in range(per_partition):
            value = b"p%d-r%d" % (p, i)
            producer.produce(
                topic,
                key=b"k%d" % i,
                value=value,
                partition=p,
                timestamp=BASE_TS + i,
                headers=[("seq", b"%d" % i)],
            )
            values[(p, i)] = value
    assert producer.flush(30) == 0
    return values


def consume_all(bootstrap: str, topic: str, partitions: int, expected: int) -> list:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "spark-test-check", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got = []
    try:
        while len(got) < expected:
            msgs = consumer.consume(expected - len(got), timeout=30)
            assert msgs, f"{topic}: only {len(got)} of {expected} records"
            got.extend(m for m in msgs if m.error() is None)
    finally:
        consumer.close()
    return got


def test_streaming_read_with_max_offsets_per_trigger_yields_every_record_once(
    spark: SparkSession, bootstrap: str, new_topic: Callable[..., str], checkpoint: str
) -> None:
    topic = new_topic(3)
    values = produce_numbered(bootstrap, topic, partitions=3, per_partition=20)
    query = (
        spark.readStream.format("kafkito")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "25")
        .option("includeHeaders", "true")
        .load()
        .writeStream.format("memory")
        .queryName("stream_read_once")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    rows = spark.sql("select * from stream_read_once").collect()

    assert sorted((r.partition, r.offset) for r in rows) == sorted(values)
    assert {(r.partition, r.offset): r.value for r in rows} == values
    sample = next(r for r in rows if (r.partition, r.offset) == (2, 7))
    assert (sample.key, sample.topic, sample.timestampType) == (b"k7", topic, 0)
    assert sample.timestamp.timestamp() == (BASE_TS + 7) / 1000  # PySpark hands back local naive times
    assert [(h.key, h.value) for h in sample.headers] == [("seq", b"7")]
    sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert sizes == [24, 24, 12]  # floored shares of 25 over three partitions, as Spark's connector
    assert json.loads(query.lastProgress["sources"][0]["endOffset"]) == {topic: {"0": 20, "1": 20, "2": 20}}


def committed(bootstrap: str, group: str) -> dict[int, int]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
    return {tp.partition: tp.offset for tp in result.topic_partitions or []}


def test_streaming_read_resumes_from_its_checkpoint_finds_new_partitions_and_commits_to_the_group(
    spark: SparkSession, bootstrap: str, new_topic: Callable[..., str], checkpoint: str
) -> None:
    topic = new_topic(2)
    group = f"{topic}-pipeline"
    produce_numbered(bootstrap, topic, partitions=2, per_partition=5)

    def run() -> list[tuple[int, int]]:
        seen: list[tuple[int, int]] = []  # foreachBatch runs here, in the driver
        query = (
            spark.readStream.format("kafkito")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "4")
            .option("kafka.group.id", group)
            .load()
            .writeStream.foreachBatch(
                lambda df, _: seen.extend((r.partition, r.offset) for r in df.collect())
            )
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        return sorted(seen)

    assert run() == [(p, o) for p in range(2) for o in range(5)]
    assert committed(bootstrap, group) == {0: 5, 1: 5}
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_partitions([NewPartitions(topic, 3)])[topic].result(30)
    produce_numbered(bootstrap, topic, partitions=3, per_partition=3)  # offsets 5..7, and 0..2 of the new one
    assert run() == [(p, o) for p in range(2) for o in range(5, 8)] + [(2, 0), (2, 1), (2, 2)]
    assert committed(bootstrap, group) == {0: 8, 1: 8, 2: 3}
    description = admin.describe_consumer_groups([group])[group].result(30)
    assert description.members == []  # progress is committed without joining the group


def test_batch_read_between_json_starting_and_ending_offsets(
    spark: SparkSession, bootstrap: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(3)
    produce_numbered(bootstrap, topic, partitions=3, per_partition=10)
    df = (
        spark.read.format("kafkito")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", json.dumps({topic: {"0": -2, "1": 3, "2": 9}}))
        .option("endingOffsets", json.dumps({topic: {"0": 4, "1": -1, "2": 9}}))
        .load()
    )
    assert [f.name for f in df.schema.fields] == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType",
    ]  # fmt: skip
    got = sorted((r.partition, r.offset, r.value) for r in df.collect())
    expected = [(0, o, b"p0-r%d" % o) for o in range(4)] + [(1, o, b"p1-r%d" % o) for o in range(3, 10)]
    assert got == expected


def test_batch_read_by_assignment_by_pattern_and_of_a_missing_topic(
    spark: SparkSession, bootstrap: str, new_topic: Callable[..., str]
) -> None:
    a, b = new_topic(2, suffix="-pat"), new_topic(1, suffix="-pat")
    produce_numbered(bootstrap, a, partitions=2, per_partition=3)
    produce_numbered(bootstrap, b, partitions=1, per_partition=4)
    reader = spark.read.format("kafkito").option("kafka.bootstrap.servers", bootstrap)
    assigned = reader.option("assign", json.dumps({a: [1], b: [0]})).load()
    assert sorted((r.topic, r.partition) for r in assigned.collect()) == [(a, 1)] * 3 + [(b, 0)] * 4
    pattern = spark.read.format("kafkito").option("kafka.bootstrap.servers", bootstrap)
    by_pattern = pattern.option("subscribePattern", a[: -len("-0-pat")] + r"-\d-pat").load()
    assert by_pattern.count() == 10
    missing = spark.read.format("kafkito").option("kafka.bootstrap.servers", bootstrap)
    assert missing.option("subscribe", f"{a}-missing").load().count() == 0


def test_batch_write_with_topic_partition_and_header_columns(
    spark: SparkSession, bootstrap: str, new_topic: Callable[..., str]
) -> None:
    first, second = new_topic(2), new_topic(1)
    rows = [
        (first, 1, "k1", "v1", [("h", bytearray(b"x"))]),
        (first, 0, "k2", "v2", None),
        (second, None, None, "v3", []),
    ]
    headers = "headers array<struct<key:string,value:binary>>"
    df = spark.createDataFrame(rows, f"topic string, partition int, key string, value string, {headers}")
    df.write.format("kafkito").option("kafka.bootstrap.servers", bootstrap).mode("append").save()
    got = consume_all(bootstrap, first, 2, 2)
    assert sorted((m.partition(), m.key(), m.value(), m.headers()) for m in got) == [
        (0, b"k2", b"v2", None),
        (1, b"k1", b"v1", [("h", b"x")]),
    ]
    [third] = consume_all(bootstrap, second, 1, 1)
    assert (third.key(), third.value()) == (None, b"v3")


def test_write_without_topic_is_refused(spark: SparkSession, bootstrap: str) -> None:
    df = spark.createDataFrame([("v",)], "value string")
    with pytest.raises(Exception, match="topic option required"):
        df.write.format("kafkito").option("kafka.bootstrap.servers", bootstrap).mode("append").save()


def test_streaming_write_then_read_back(
    spark: SparkSession, bootstrap: str, new_topic: Callable[..., str], checkpoint: str
) -> None:
    source, sink = new_topic(2), new_topic(1)
    produce_numbered(bootstrap, source, partitions=2, per_partition=15)
    query = (
        spark.readStream.format("kafkito")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "upper(cast(value as string)) as value")
        .writeStream.format("kafkito")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    back = consume_all(bootstrap, sink, 1, 30)
    expected = sorted((b"k%d" % i, b"P%d-R%d" % (p, i)) for p in range(2) for i in range(15))
    assert sorted((m.key(), m.value()) for m in back) == expected
