"""The `kafkito` PySpark data source: Spark's Kafka options and schema, backed by confluent-kafka."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kafkito_spark.errors import KafkaOptionError
from kafkito_spark.options import parse_read_options, parse_write_options
from kafkito_spark.reader import KafkaBatchReader, KafkaStreamReader
from kafkito_spark.writer import KafkaBatchWriter, KafkaStreamWriter, check_write_schema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Spark reserves `kafka` for its JVM connector even when the jar is absent (DATA_SOURCE_ALREADY_EXISTS).
NAME = "kafkito"

HEADERS_TYPE = ArrayType(
    StructType([StructField("key", StringType()), StructField("value", BinaryType())]), containsNull=True
)


def kafka_schema(include_headers: bool) -> StructType:
    """The columns of Spark's Kafka source, in its order."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(StructField("headers", HEADERS_TYPE))
    return StructType(fields)


class KafkaDataSource(DataSource):
    """Reads and writes Kafka topics, in batch and streaming queries, as `format("kafkito")`."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        headers = str(self.options.get("includeHeaders", self.options.get("includeheaders", "false")))
        return kafka_schema(headers.strip().lower() == "true")

    def _checked_schema(self, schema: StructType) -> StructType:
        expected = self.schema()
        if schema != expected:
            raise KafkaOptionError(f"the kafkito source has a fixed schema {expected.simpleString()}")
        return schema

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaBatchReader(
            parse_read_options(self.options, streaming=False), self._checked_schema(schema)
        )

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaStreamReader(
            parse_read_options(self.options, streaming=True), self._checked_schema(schema)
        )

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        options = parse_write_options(self.options)
        check_write_schema(schema, options)
        return KafkaBatchWriter(options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        options = parse_write_options(self.options)
        check_write_schema(schema, options)
        return KafkaStreamWriter(options)


def register(spark: SparkSession) -> str:
    """Register the source with a session; returns the format name to use (`kafkito`)."""
    spark.dataSource.register(KafkaDataSource)
    return NAME
