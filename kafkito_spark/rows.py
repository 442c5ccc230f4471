"""The rows a writer task produces, read from Spark's Arrow batches with the sink's column rules."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkito_spark.errors import KafkaOptionError

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True, slots=True)
class Row:
    """One record to produce: the `topic` option wins over the column, as in Spark's Kafka sink."""

    topic: str
    key: bytes | None
    value: bytes | None
    partition: int | None
    headers: list[tuple[str, bytes | None]] | None


def _as_bytes(value: str | bytes | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else value


def rows_of(topic_option: str | None, batches: Iterator[pa.RecordBatch]) -> Iterator[Row]:
    """Every row of the batches; a row with no topic (neither option nor column) fails the task."""
    for batch in batches:
        columns: dict[str, list[Any]] = {
            name.lower(): batch.column(i).to_pylist() for i, name in enumerate(batch.schema.names)
        }
        n = batch.num_rows
        nothing: list[Any] = [None] * n
        topics = [topic_option] * n if topic_option is not None else columns["topic"]
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
            yield Row(
                topic,
                _as_bytes(key),
                _as_bytes(value),
                partition,
                [(h["key"], h["value"]) for h in headers] if headers else None,
            )
