"""Batch and streaming writers: each Spark task produces its rows (`key`, `value`, `topic`, ...),
at least once, or exactly once in transactions the driver ends."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    StringType,
    StructType,
)

from kafkito_spark.client import RecordProducer
from kafkito_spark.errors import KafkaOptionError
from kafkito_spark.options import WriteOptions
from kafkito_spark.rows import rows_of
from kafkito_spark.transactions import (
    BATCH_ID_PROPERTY,
    BatchMarker,
    TransactionToEnd,
    end_transactions,
    transactional_id,
    write_in_transaction,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark import TaskContext

_KEY_VALUE_TYPES = (StringType, BinaryType)


@dataclass
class ProducedRecords(WriterCommitMessage):
    """What one task wrote: the count of records acknowledged by the broker."""

    records: int


def check_write_schema(schema: StructType, options: WriteOptions) -> None:
    """Spark's Kafka sink rules: `value` required, `key`/`topic`/`partition`/`headers` optional."""
    fields = {f.name.lower(): f.dataType for f in schema.fields}
    if "value" not in fields:
        raise KafkaOptionError("required attribute 'value' not found")
    for name in ("key", "value"):
        if name in fields and not isinstance(fields[name], _KEY_VALUE_TYPES):
            raise KafkaOptionError(f"{name} attribute type must be a string or binary, got {fields[name]}")
    if options.topic is None and "topic" not in fields:
        raise KafkaOptionError(
            "topic option required when no 'topic' attribute is present. "
            "Use the topic option for setting a topic."
        )
    if "topic" in fields and not isinstance(fields["topic"], StringType):
        raise KafkaOptionError(f"topic attribute type must be a string, got {fields['topic']}")
    if "partition" in fields and not isinstance(fields["partition"], IntegerType):
        raise KafkaOptionError(f"partition attribute type must be an int, got {fields['partition']}")
    if "headers" in fields:
        headers = fields["headers"]
        ok = (
            isinstance(headers, ArrayType)
            and isinstance(headers.elementType, StructType)
            and [f.name for f in headers.elementType.fields] == ["key", "value"]
            and isinstance(headers.elementType.fields[0].dataType, StringType)
            and isinstance(headers.elementType.fields[1].dataType, BinaryType)
        )
        if not ok:
            raise KafkaOptionError(
                f"headers attribute type must be array<struct<key:string,value:binary>>, got {headers}"
            )


def produce_batches(options: WriteOptions, batches: Iterator[pa.RecordBatch]) -> ProducedRecords:
    """Produce every row, wait for the broker's acknowledgements, fail the task on any error."""
    producer = RecordProducer(options.client)
    for row in rows_of(options.topic, batches):
        producer.produce(row.topic, row.value, key=row.key, partition=row.partition, headers=row.headers)
    producer.flush()
    return ProducedRecords(producer.sent)


def _task() -> TaskContext:
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        raise RuntimeError("the exactly-once sink writes from Spark tasks only")
    return context


def produce_in_transaction(
    options: WriteOptions, batches: Iterator[pa.RecordBatch], job: str | None
) -> TransactionToEnd:
    """A task's rows in its own transaction, left open for the driver's commit.

    A streaming task names its transaction after its micro-batch (Spark's local property
    `streaming.sql.batchId`) and records a batch marker in it; a batch job's task after the job.
    """
    assert options.transactional_id_prefix is not None and options.topic is not None  # parse_write_options
    context = _task()
    partition = context.partitionId()
    marker: BatchMarker | None = None
    if job is None:
        raw = context.getLocalProperty(BATCH_ID_PROPERTY)
        if raw is None:
            raise RuntimeError(f"Spark did not pass the micro-batch id ({BATCH_ID_PROPERTY}) to the task")
        marker = BatchMarker.of(options.transactional_id_prefix, options.topic, int(raw), partition)
        job = raw
    txn_id = transactional_id(options.transactional_id_prefix, job, partition)
    return write_in_transaction(options.client, txn_id, rows_of(options.topic, batches), marker)


class KafkaBatchWriter(DataSourceArrowWriter):
    """`df.write`: append the rows to Kafka (Kafka has no overwrite; Spark's sink appends too).

    Exactly-once: each task writes in its own transaction, committed when the job commits.
    """

    def __init__(self, options: WriteOptions) -> None:
        self.options = options
        self.job = uuid.uuid4().hex  # made on the driver: every attempt of a task shares it

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        if self.options.delivery_guarantee == "exactly-once":
            return produce_in_transaction(self.options, iterator, self.job)
        return produce_batches(self.options, iterator)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        end_transactions(self.options.client, messages, commit=True)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        end_transactions(self.options.client, messages, commit=False)


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    """`df.writeStream`: each micro-batch's rows are produced by its tasks.

    At least once by default: a batch that fails after some tasks were acknowledged is retried
    whole by Spark, as with Spark's own Kafka sink. With `deliveryGuarantee` `exactly-once`, each
    task writes in a transaction that `commit(batchId)` commits and `abort` aborts
    (kafkito_spark/transactions.py).
    """

    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        if self.options.delivery_guarantee == "exactly-once":
            return produce_in_transaction(self.options, iterator, None)
        return produce_batches(self.options, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        end_transactions(self.options.client, messages, commit=True)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        end_transactions(self.options.client, messages, commit=False)
