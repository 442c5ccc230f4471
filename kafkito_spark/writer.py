"""Batch and streaming writers: each Spark task produces its rows (`key`, `value`, `topic`, ...)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    import pyarrow as pa

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


def _as_bytes(value: str | bytes | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else value


def produce_batches(options: WriteOptions, batches: Iterator[pa.RecordBatch]) -> ProducedRecords:
    """Produce every row, wait for the broker's acknowledgements, fail the task on any error."""
    producer = RecordProducer(options.client)
    for batch in batches:
        columns: dict[str, list[Any]] = {
            name.lower(): batch.column(i).to_pylist() for i, name in enumerate(batch.schema.names)
        }
        n = batch.num_rows
        nothing: list[Any] = [None] * n
        topics = [options.topic] * n if options.topic is not None else columns["topic"]
        for topic, key, value, partition, headers in zip(
            topics,
            columns.get("key", nothing),
            columns["value"],
            columns.get("partition", nothing),
            columns.get("headers", nothing),
            strict=True,
        ):
            if topic is None:
                raise KafkaOptionError(
                    "null topic present in the data. Use the topic option for setting a topic."
                )
            producer.produce(
                topic,
                _as_bytes(value),
                key=_as_bytes(key),
                partition=partition,
                headers=[(h["key"], h["value"]) for h in headers] if headers else None,
            )
    producer.flush()
    return ProducedRecords(producer.sent)


class KafkaBatchWriter(DataSourceArrowWriter):
    """`df.write`: append the rows to Kafka (Kafka has no overwrite; Spark's sink appends too)."""

    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> ProducedRecords:
        return produce_batches(self.options, iterator)


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    """`df.writeStream`: each micro-batch's rows are produced by its tasks, at least once.

    A batch that fails after some tasks were acknowledged is retried whole by Spark, as with
    Spark's own Kafka sink; `commit(batchId)` has nothing left to publish.
    """

    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> ProducedRecords:
        return produce_batches(self.options, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        pass

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        pass
