"""kafkito_spark's exactly-once sink: read_committed readers see every record once, through task
failures and a driver restart that replays a committed batch, on kafkito and on Apache Kafka 4.4."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition

from kafkito_spark.errors import KafkaOptionError
from kafkito_spark.options import parse_write_options
from tests.support.admin import create_topic
from tests.support.kafka_reference import KafkaReference
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PARTITIONS = 2
PER_BATCH = 10  # records per input partition and micro-batch
BAD_PARTITION = 7  # no such partition: the producer refuses the row, failing the task


def _produce(bootstrap: str, topic: str, values: range) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for v in values:
        producer.produce(topic, value=str(v).encode(), partition=v % PARTITIONS)
    assert producer.flush(30) == 0


def read_all(bootstrap: str, topic: str, isolation: str) -> list[bytes]:
    """Every record of the topic's partitions up to their end, as a consumer at `isolation` sees it."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "exactly-once-reader",
            "isolation.level": isolation,
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    consumer.assign([KafkaTopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    values: list[bytes] = []
    at_end: set[int] = set()
    try:

        def all_read() -> bool:
            for msg in consumer.consume(500, timeout=0.5):
                err = msg.error()
                if err is None:
                    values.append(msg.value())
                elif err.code() == KafkaError._PARTITION_EOF:
                    at_end.add(msg.partition())
                else:
                    raise AssertionError(err)
            return len(at_end) == PARTITIONS

        wait_until(all_read, 60, f"{topic} read to its end at {isolation}")
    finally:
        consumer.close()
    return values


def _flaky(frame: DataFrame) -> DataFrame:
    """The rows to write; on a task's first attempt, the last row of each input partition's batch
    names a partition that does not exist, so the task fails after producing the others."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType

    def target(offset: int) -> int | None:
        from pyspark import TaskContext

        context = TaskContext.get()
        first_attempt = context is not None and context.attemptNumber() == 0
        return BAD_PARTITION if first_attempt and offset % PER_BATCH == PER_BATCH - 1 else None

    pick = F.udf(target, IntegerType())
    return frame.select(F.col("value"), F.col("key"), pick(F.col("offset")).alias("partition"))


def _run(spark: SparkSession, bootstrap: str, source: str, sink: str, checkpoint: str) -> list[int]:
    """Run the query over everything available and stop it; the ids of the batches it ran."""
    frame = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(PER_BATCH * PARTITIONS))
        .load()
    )
    query = (
        _flaky(frame)
        .writeStream.format("kafkito")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("deliveryGuarantee", "exactly-once")
        .option("transactionalIdPrefix", f"{sink}-writer")
        .option("checkpointLocation", checkpoint)
        .start()
    )
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    return [p["batchId"] for p in query.recentProgress if p["numInputRows"] > 0]


def _forget_last_commit(checkpoint: str) -> int:
    """What a driver crash after the sink's commit and before Spark's commit log leaves behind."""
    commits = Path(checkpoint) / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    (commits / str(last)).unlink()
    (commits / f".{last}.crc").unlink(missing_ok=True)
    return last


def check_exactly_once(spark: SparkSession, bootstrap: str, source: str, sink: str, checkpoint: str) -> None:
    """Two batches whose tasks each fail once, then a restart replaying the last one and a third."""
    _produce(bootstrap, source, range(0, 2 * PER_BATCH * PARTITIONS))
    assert _run(spark, bootstrap, source, sink, checkpoint) == [0, 1]

    replayed = _forget_last_commit(checkpoint)
    _produce(bootstrap, source, range(2 * PER_BATCH * PARTITIONS, 3 * PER_BATCH * PARTITIONS))
    assert _run(spark, bootstrap, source, sink, checkpoint) == [replayed, replayed + 1]

    expected = sorted(str(v).encode() for v in range(3 * PER_BATCH * PARTITIONS))
    assert sorted(read_all(bootstrap, sink, "read_committed")) == expected
    # Each batch's failed first attempts produced all but their last rows, now aborted.
    uncommitted = read_all(bootstrap, sink, "read_uncommitted")
    assert len(uncommitted) == len(expected) + 3 * PARTITIONS * (PER_BATCH - 1)


def test_exactly_once_through_task_failures_and_a_replayed_batch_on_kafkito(
    spark: SparkSession, bootstrap: str, new_topic: Callable[..., str], checkpoint: str
) -> None:
    check_exactly_once(spark, bootstrap, new_topic(PARTITIONS), new_topic(PARTITIONS), checkpoint)


@pytest.fixture
def apache_kafka() -> Iterator[str]:
    with KafkaReference() as kafka:
        yield kafka.bootstrap


def test_exactly_once_on_apache_kafka(spark: SparkSession, apache_kafka: str, checkpoint: str) -> None:
    create_topic(apache_kafka, "clicks", PARTITIONS)
    create_topic(apache_kafka, "clicks-once", PARTITIONS)
    check_exactly_once(spark, apache_kafka, "clicks", "clicks-once", checkpoint)


@pytest.mark.parametrize(
    ("options", "refusal"),
    [
        ({"deliveryGuarantee": "exactly-once", "topic": "t"}, "transactionalIdPrefix"),
        ({"deliveryGuarantee": "exactly-once", "transactionalIdPrefix": "p"}, "'topic'"),
        ({"deliveryGuarantee": "twice", "topic": "t"}, "at-least-once or exactly-once"),
    ],
)
def test_exactly_once_options_are_checked(options: dict[str, str], refusal: str) -> None:
    with pytest.raises(KafkaOptionError, match=refusal):
        parse_write_options({"kafka.bootstrap.servers": "localhost:9092", **options})


def test_a_batch_write_in_exactly_once_mode_is_committed_with_the_job(
    spark: SparkSession, bootstrap: str, new_topic: Callable[..., str]
) -> None:
    sink = new_topic(PARTITIONS)
    rows = [(str(v), v % PARTITIONS) for v in range(40)]
    (
        spark.createDataFrame(rows, "value string, partition int")
        .repartition(2)
        .write.format("kafkito")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("deliveryGuarantee", "exactly-once")
        .option("transactionalIdPrefix", f"{sink}-job")
        .save()
    )
    expected = sorted(str(v).encode() for v in range(40))
    assert sorted(read_all(bootstrap, sink, "read_committed")) == expected
    assert sorted(read_all(bootstrap, sink, "read_uncommitted")) == expected
